package fleet_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// submitWatch runs `perfbot submit watch --once` (the real binary) on the
// fixture's fleet and returns its exit status and stderr.
func submitWatch(t testing.TB, f *fixture, watchFile string) (int, string) {
	t.Helper()
	bin, err := perfbotBinary()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "submit", "watch", "--db", f.url, watchFile, "--once")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	if stdout.Len() > 0 {
		t.Errorf("submit watch printed on stdout: %q", stdout.String())
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestFleetWatch: `perfbot submit watch --once` runs watch cycles on the
// fleet's server, the jobs measured and triaged by two real workers of the
// watch file's class: the first cycle starts the history at the head, the
// second tests three new commits beside it and finds the planted 2x
// slowdown (exit 1, the one real regression, in the report folder), and a third finds
// and reports nothing again (exit 0).
func TestFleetWatch(t *testing.T) {
	f := newFixture(t, 8, 200000)
	f.worker(t, "w1", 0)
	f.worker(t, "w2", 1)
	dir := filepath.Dir(f.spec.File)
	watchFile := filepath.Join(dir, "watch.yaml")
	if err := os.WriteFile(watchFile, []byte(fmt.Sprintf(`class: test
jobs: [%s]
branches: [main]
report: {dir: reports}
`, filepath.Base(f.spec.File))), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, log := submitWatch(t, f, watchFile); code != 0 || !strings.Contains(log, "1 commits tested, 0 findings") {
		t.Fatalf("cycle 1: exit %d, want 0 and the head tested:\n%s", code, log)
	}
	r := f.repo
	r.Commit("docs", map[string]string{"README": "bench\n"})
	slow := r.Commit("twice the work", map[string]string{"bench.c": testutil.BenchC(18, "v")})
	r.Commit("more docs", map[string]string{"README": "bench, twice\n"})
	code, log := submitWatch(t, f, watchFile)
	if code != 1 || !strings.Contains(log, "3 commits tested") || !strings.Contains(log, "new real regressions: "+slow[:12]+"\n") {
		t.Fatalf("cycle 2: exit %d, want 1, three commits tested and the slowdown %.12s a new real regression:\n%s", code, slow, log)
	}
	reports, _ := filepath.Glob(filepath.Join(dir, "reports", "*.json"))
	if len(reports) != 1 || filepath.Base(reports[0]) != slow[:12]+".json" {
		t.Errorf("report folder: %v, want the one finding %.12s.json", reports, slow)
	}
	if code, log := submitWatch(t, f, watchFile); code != 0 || !strings.Contains(log, "0 commits tested, 0 findings") {
		t.Errorf("cycle 3: exit %d, want 0 and nothing new:\n%s", code, log)
	}
	if again, _ := filepath.Glob(filepath.Join(dir, "reports", "*.json")); len(again) != 1 {
		t.Errorf("report folder after cycle 3: %v", again)
	}
}
