package fleet_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestFleetSensitivity: `perfbot submit sensitivity` (the real binary)
// has the server build the commit plain, forced and under two more
// layouts on a real worker, measure them, and prints the report as
// perfbot sensitivity does, sizes of the server's copies of the artifacts
// included.
func TestFleetSensitivity(t *testing.T) {
	f := newFixture(t, 3, 100000)
	f.worker(t, "s1", 0)
	bin, err := perfbotBinary()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "submit", "sensitivity", "--db", f.url, "--class", "test", f.spec.File, f.commits[1][:10], "--layouts", "3")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("perfbot submit sensitivity: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"layout sensitivity of " + f.commits[1][:12], "3 layouts", "work_ms", "size cost of forced alignment: .text"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s\n%s", want, out, stderr.String())
		}
	}
	cmd = exec.Command(bin, "submit", "sensitivity", "--db", f.url, "--class", "test", f.spec.File, f.commits[1], "--layouts", "-1")
	if msg, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(msg), "--layouts -1") {
		t.Errorf("--layouts -1: %v: %s", err, msg)
	}
}
