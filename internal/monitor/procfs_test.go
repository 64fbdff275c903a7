package monitor

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/testutil"
)

const interruptsText = `           CPU0       CPU1       
  0:         31          0   IO-APIC   2-edge      timer
 24:        121       4021   PCI-MSI 49152-edge      virtio0-config
 25:       1000       2000   PCI-MSI 49153-edge      virtio0-input.0, virtio0-output.0
NMI:          0          0   Non-maskable interrupts
LOC:    5591374    3920384   Local timer interrupts
ERR:          0
MIS:          0
`

func TestParseInterrupts(t *testing.T) {
	got := map[string]float64{}
	for _, f := range parseInterrupts(interruptsText) {
		got[f.name] = f.value
	}
	want := map[string]float64{
		"0:IO-APIC.2-edge.timer":                                 31,
		"24:PCI-MSI.49152-edge.virtio0-config":                   4142,
		"25:PCI-MSI.49153-edge.virtio0-input.0,virtio0-output.0": 3000,
		"NMI:Non-maskable_interrupts":                            0,
		"LOC:Local_timer_interrupts":                             9511758,
		"ERR":                                                    0,
		"MIS":                                                    0,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestParseMemInfoVMStat(t *testing.T) {
	mem := parseMemInfo("MemTotal:       16384000 kB\nHugePages_Total:       0\nbogus line\n")
	if len(mem) != 2 || mem[0] != (procField{"MemTotal", 16384000, "KiB"}) || mem[1] != (procField{"HugePages_Total", 0, ""}) {
		t.Errorf("meminfo: %+v", mem)
	}
	vm := parseVMStat("nr_free_pages 123\npgfault 456\n\n")
	if len(vm) != 2 || vm[1] != (procField{"pgfault", 456, ""}) {
		t.Errorf("vmstat: %+v", vm)
	}
}

// TestProcDeltas: the real files' changes over a run that faults in 64
// MiB (dd's buffer, filled from /dev/zero).
func TestProcDeltas(t *testing.T) {
	testutil.NeedTool(t, "sh")
	s, err := Prepare([]job.Monitor{{Name: "vmstat"}, {Name: "meminfo"}, {Name: "interrupts"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r, err := s.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Wrap() != nil {
		t.Errorf("the /proc monitors wrap the run: %v", r.Wrap())
	}
	res, err := run.Exec(t.Context(), run.Spec{Command: "dd if=/dev/zero of=/dev/null bs=64M count=1", Dir: dir, CPU: -1,
		StdoutPath: filepath.Join(dir, "stdout"), StderrPath: filepath.Join(dir, "stderr")})
	if err != nil || res.ExitCode != 0 {
		t.Fatal(res, err)
	}
	vals := map[string]metric.Value{}
	count := map[string]int{}
	for _, v := range r.Finish(t.Context(), true) {
		vals[v.Name] = v
		count[strings.SplitN(v.Name, ".", 2)[0]]++
		if !metric.IsMonitor(v.Name) {
			t.Errorf("%s is not a monitor's name", v.Name)
		}
	}
	t.Logf("figures: %v", count)
	for _, m := range []string{"vmstat", "meminfo", "interrupts"} {
		if count[m] < 2 {
			t.Errorf("%d %s figures", count[m], m)
		}
	}
	if v := vals["vmstat.pgfault"]; v.Value < 16384 {
		t.Errorf("vmstat.pgfault rose by %v, want at least 16384 (64 MiB of 4 KiB pages)", v.Value)
	}
	if v := vals["meminfo.MemTotal"]; v.Value != 0 || v.Unit != "KiB" {
		t.Errorf("meminfo.MemTotal changed by %+v", v)
	}
	if _, err := os.Stat(filepath.Join(dir, LogFile)); err == nil {
		b, _ := os.ReadFile(filepath.Join(dir, LogFile))
		t.Errorf("problems: %s", b)
	}
}
