package monitor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// PerfPackage is the Debian package that installs perf.
const PerfPackage = "linux-perf"

// ErrNoPerf is wrapped by the error of a job whose monitors need perf on a
// machine without it.
var ErrNoPerf = errors.New("perf is not installed")

// detector finds out, once per process, what this machine lets the perf
// monitors do. Its zero value is ready; tests use their own.
type detector struct {
	mu       sync.Mutex
	perf     string // perf's path, once found
	perfErr  error
	counters *counters
	events   map[string]eventProbe // perf-profile event asked for -> result
}

// counters is whether perf can count hardware events here.
type counters struct {
	ok   bool
	note string // when not: what perf stat said
}

type eventProbe struct {
	event string // the event to record
	err   error
}

// machine is this process's detector.
var machine = &detector{}

// probeTimeout bounds each probe (perf stat or perf record of true).
const probeTimeout = 30 * time.Second

// perfPath returns the path of a perf that runs, or an error naming the
// Debian package to install.
func (d *detector) perfPath() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.perf != "" || d.perfErr != nil {
		return d.perf, d.perfErr
	}
	path, err := exec.LookPath("perf")
	if err != nil {
		d.perfErr = fmt.Errorf("%w (Debian package %s): %v", ErrNoPerf, PerfPackage, err)
		return "", d.perfErr
	}
	// Debian's perf is a script that runs the perf of the running
	// kernel's version, and fails when that one is missing.
	if out, err := probe(path, "version"); err != nil {
		d.perfErr = fmt.Errorf("%w: %s version fails (install the Debian package %s for this kernel): %v: %s",
			ErrNoPerf, path, PerfPackage, err, firstLine(out))
		return "", d.perfErr
	}
	d.perf = path
	return path, nil
}

// hardwareCounters reports whether perf counts hardware events here, as
// `perf stat -e cycles true` shows; when not, with perf's own words.
func (d *detector) hardwareCounters(perf string) counters {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.counters == nil {
		c := counters{}
		out, err := probe(perf, "stat", "-x,", "-e", "cycles", "true")
		switch v, _, ok := statLine(out, "cycles"); {
		case err != nil:
			c.note = fmt.Sprintf("perf stat -e cycles true fails: %v: %s", err, firstLine(out))
		case !ok:
			c.note = "perf stat -e cycles true printed no count for cycles"
		case strings.HasPrefix(v, "<"):
			c.note = "perf stat -e cycles true says " + v
		default:
			c.ok = true
		}
		d.counters = &c
	}
	return *d.counters
}

// lkpCycles are the events perf-profile's "auto" tries where the machine
// has hardware counters, in lkp's order (its monitors/perf-profile).
var lkpCycles = []string{"cycles:pp", "cycles:p", "cycles"}

// profileEvent returns the event perf-profile records for the event the
// job asked for ("auto": the first of lkpCycles that perf records here,
// cpu-clock on a machine without hardware counters), or an error saying
// why perf record cannot record it.
func (d *detector) profileEvent(perf, want string) (string, error) {
	var try []string
	if want == "auto" {
		if d.hardwareCounters(perf).ok {
			try = append(try, lkpCycles...)
		}
		try = append(try, "cpu-clock")
	} else {
		try = []string{want}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.events[want]; ok {
		return p.event, p.err
	}
	var p eventProbe
	for _, ev := range try {
		if p.err = probeRecord(perf, ev); p.err == nil {
			p.event = ev
			break
		}
	}
	if d.events == nil {
		d.events = map[string]eventProbe{}
	}
	d.events[want] = p
	return p.event, p.err
}

// probeRecord records `true` with event ev and checks that perf recorded
// ev itself: perf record silently falls back from cycles to cpu-clock on
// machines without hardware counters.
func probeRecord(perf, ev string) error {
	dir, err := os.MkdirTemp("", "perfbot-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "perf.data")
	out, err := probe(perf, "record", "-q", "--no-bpf-event", "-N", "-e", ev, "-o", data, "--", "true")
	if err != nil {
		return fmt.Errorf("perf record -e %s cannot record here: %v: %s%s", ev, err, firstLine(out), paranoidHint())
	}
	got, err := probe(perf, "evlist", "-i", data)
	if err != nil {
		return fmt.Errorf("perf evlist of a probe: %v: %s", err, firstLine(got))
	}
	if name := strings.TrimSpace(firstLine(got)); eventBase(name) != eventBase(ev) {
		return fmt.Errorf("perf record -e %s records %s on this machine", ev, name)
	}
	return nil
}

// eventBase is an event's name without its modifiers (cycles:pp: cycles).
func eventBase(ev string) string {
	b, _, _ := strings.Cut(ev, ":")
	return b
}

// paranoidHint says what perf_event_paranoid allows, for errors.
func paranoidHint() string {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (kernel.perf_event_paranoid is %s; 1 or less lets users profile their own processes with kernel samples, 2 user space only)", strings.TrimSpace(string(b)))
}

// probe runs perf with args and returns its combined output.
func probe(perf string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	return exec.CommandContext(ctx, perf, args...).CombinedOutput()
}

// statLine finds event's line in perf stat -x, output and returns its value
// field (a count, or <not supported> / <not counted>) and its unit.
func statLine(out []byte, event string) (value, unit string, ok bool) {
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, ",")
		if len(f) >= 3 && (f[2] == event || eventBase(f[2]) == event) {
			return f[0], f[1], true
		}
	}
	return "", "", false
}

func firstLine(b []byte) string {
	l, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	return string(l)
}
