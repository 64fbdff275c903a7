package fleet_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestSubmitCommand: `perfbot submit compare` (the real binary) queues a
// comparison on the fleet, waits for the server and a worker to measure
// it, and prints the 0-day table from the fleet's results store;
// `perfbot submit bisect` refuses a bad class with a message.
func TestSubmitCommand(t *testing.T) {
	f := newFixture(t, 3, 100000)
	f.worker(t, "s1", 0)
	bin, err := perfbotBinary()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "submit", "compare", "--db", f.url, "--class", "test", f.spec.File, f.commits[0], f.commits[1])
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
		t.Fatalf("perfbot submit compare: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	// The job's own metric; the builtin monitors' rows show only when
	// they changed (lkp's rule), so none of them is required here.
	for _, want := range []string{f.commits[0][:16], "%change", "work_ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s\n%s", want, out, stderr.String())
		}
	}
	cmd = exec.Command(bin, "submit", "bisect", "--db", f.url, "--class", "No Such", f.spec.File,
		"--good", f.commits[0], "--bad", f.commits[1], "--metric", "work_ms")
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), `class "No Such"`) {
		t.Errorf("a bad class: %v: %s", err, msg)
	}
}
