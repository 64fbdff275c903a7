package monitor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestNoPerf: a job with a perf monitor on a machine without perf gets an
// error naming the Debian package; the /proc monitors need no perf.
func TestNoPerf(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	d := &detector{}
	for _, name := range []string{"perf-profile", "perf-stat"} {
		_, err := d.prepare([]job.Monitor{{Name: name, Event: "auto", Events: []string{"task-clock"}}})
		if !errors.Is(err, ErrNoPerf) || !strings.Contains(err.Error(), "Debian package linux-perf") || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v; want one naming the monitor and the package linux-perf", name, err)
		}
	}
	if _, err := d.prepare([]job.Monitor{{Name: "vmstat"}, {Name: "meminfo"}, {Name: "interrupts"}}); err != nil {
		t.Errorf("the /proc monitors: %v", err)
	}
}

// TestBrokenPerf: Debian's perf script that finds no perf for the running
// kernel is a missing perf too.
func TestBrokenPerf(t *testing.T) {
	testutil.NeedTool(t, "sh")
	dir := t.TempDir()
	script := "#!/bin/sh\necho \"WARNING: perf not found for kernel 9.9\" >&2\nexit 2\n"
	if err := os.WriteFile(filepath.Join(dir, "perf"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	_, err := (&detector{}).prepare([]job.Monitor{{Name: "perf-profile", Event: "auto"}})
	if !errors.Is(err, ErrNoPerf) || !strings.Contains(err.Error(), "perf not found for kernel 9.9") {
		t.Errorf("error %v", err)
	}
}

// TestHardwareCounters: the detection of hardware counters on this
// machine, and what perf-stat does with it. This project's machines have
// none: perf stat says <not supported>.
func TestHardwareCounters(t *testing.T) {
	testutil.NeedTool(t, "perf")
	d := &detector{}
	perf, err := d.perfPath()
	if err != nil {
		t.Fatal(err)
	}
	c := d.hardwareCounters(perf)
	t.Logf("hardware counters: %v (%s)", c.ok, c.note)
	keep, note := statEvents(job.DefaultPerfStatEvents, c)
	if c.ok {
		if len(keep) != len(job.DefaultPerfStatEvents) || note != "" {
			t.Errorf("with counters: events %v, note %q", keep, note)
		}
		return
	}
	if c.note == "" {
		t.Error("no counters, and no word of why")
	}
	for _, want := range []string{"not supported on this machine", c.note, "cpu-cycles, instructions", "counting cpu-clock, task-clock"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	for _, ev := range keep {
		if !isSoftware(ev) {
			t.Errorf("%s counted without hardware counters", ev)
		}
	}
	if ev, err := d.profileEvent(perf, "auto"); ev != "cpu-clock" && err == nil {
		t.Errorf("perf-profile's auto event is %s without hardware counters, want cpu-clock", ev)
	}
	// Asked for by name, cycles are refused, not silently recorded as
	// cpu-clock (which perf record does).
	if _, err := d.profileEvent(perf, "cycles"); err == nil || !strings.Contains(err.Error(), "cycles") {
		t.Errorf("cycles without counters: error %v", err)
	}
}

func TestStatEvents(t *testing.T) {
	none := counters{note: "perf stat -e cycles true says <not supported>"}
	keep, note := statEvents([]string{"cycles", "instructions"}, none)
	if len(keep) != 0 || !strings.Contains(note, "perf-stat does nothing here") {
		t.Errorf("only hardware events: %v, %q", keep, note)
	}
	keep, note = statEvents([]string{"task-clock", "cs:u"}, none)
	if len(keep) != 2 || note != "" {
		t.Errorf("software events only: %v, %q", keep, note)
	}
	keep, _ = statEvents([]string{"cycles", "task-clock"}, counters{ok: true})
	if len(keep) != 2 {
		t.Errorf("with counters: %v", keep)
	}
}

func TestStatLine(t *testing.T) {
	out := []byte("\n<not supported>,,cycles,0,100.00,,\n0.49,msec,task-clock,490692,100.00,0.605,CPUs utilized\n")
	if v, _, ok := statLine(out, "cycles"); !ok || v != "<not supported>" {
		t.Errorf("cycles: %q %v", v, ok)
	}
	if v, u, ok := statLine(out, "task-clock"); !ok || v != "0.49" || u != "msec" {
		t.Errorf("task-clock: %q %q %v", v, u, ok)
	}
	if _, _, ok := statLine(out, "instructions"); ok {
		t.Error("instructions found")
	}
}
