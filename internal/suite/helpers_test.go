package suite

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/metric"
)

// expand is Expand that fails the test on an error.
func expand(t *testing.T, name string, options map[string]string) *Use {
	t.Helper()
	u, err := Expand(name, options)
	if err != nil {
		t.Fatalf("Expand(%s, %v): %v", name, options, err)
	}
	return u
}

// runUse runs u's command as perfbot runs a job's run command (sh -c in
// the worktree dir) and reads every metric of u from the run, failing the
// test on a failed run, a metric that is not there, or a value read twice.
// It returns the values by name, and the run's stderr.
func runUse(t *testing.T, u *Use, dir string) (map[string]metric.Value, string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", u.Command)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("suite %s: run: %v\nstderr:\n%s", u.Suite, err, stderr.String())
	}
	out := metric.Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Dir: dir}
	got := map[string]metric.Value{}
	for _, s := range u.Metrics {
		vals, err := s.Extract(out)
		if err != nil {
			t.Fatalf("suite %s: %v\nstdout:\n%s\nstderr:\n%s", u.Suite, err, stdout.String(), stderr.String())
		}
		for _, v := range vals {
			if _, dup := got[v.Name]; dup && !slices.Contains(repeatable, u.Suite) {
				t.Errorf("suite %s: %s read twice", u.Suite, v.Name)
			}
			if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
				t.Errorf("suite %s: %s = %v", u.Suite, v.Name, v.Value)
			}
			got[v.Name] = v
		}
	}
	return got, stderr.String()
}

// repeatable are suites whose runs may give a metric several values
// (repetitions, -count).
var repeatable = []string{"gobench", "gbench"}

// wantMetrics checks that every name is there, positive, with the
// direction given (+ higher, - lower).
func wantMetrics(t *testing.T, got map[string]metric.Value, want map[string]byte) {
	t.Helper()
	for name, dir := range want {
		v, ok := got[name]
		if !ok {
			t.Errorf("no metric %s; got %s", name, strings.Join(names(got), " "))
			continue
		}
		better := metric.LowerIsBetter
		if dir == '+' {
			better = metric.HigherIsBetter
		}
		if v.Better != better || v.Value <= 0 {
			t.Errorf("%s = %v (better %v), want a positive value, better %v", name, v.Value, v.Better, better)
		}
	}
}

func names(m map[string]metric.Value) []string {
	var n []string
	for k := range m {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// scratch is a worktree stand-in with files, and TMPDIR pointed at an
// empty folder so that the test can see that a run leaves nothing there.
func scratch(t *testing.T, files map[string]string) (dir, tmp string) {
	t.Helper()
	dir, tmp = t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, tmp
}

// leftNothing checks that the run removed its temporary files.
func leftNothing(t *testing.T, tmp string) {
	t.Helper()
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		var left []string
		for _, e := range ents {
			left = append(left, e.Name())
		}
		t.Errorf("the run left %s in TMPDIR", strings.Join(left, ", "))
	}
}
