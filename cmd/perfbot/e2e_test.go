package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// These end-to-end tests drive perfbot the way a user does, on real git
// repositories holding real C code built with gcc, with real processes and
// a real SQLite store.

// newGitRepo is a scratch repository for the C benchmark below, which
// make builds with gcc.
func newGitRepo(t *testing.T) *testutil.GitRepo {
	t.Helper()
	testutil.NeedTool(t, "gcc", "make")
	return testutil.NewGitRepo(t)
}

// jobYAML is the minimum job form, pointing at the repo.
func jobYAML(repo string, runs int, command string) string {
	return fmt.Sprintf(`repo: %s
build:
  command: make bench
  artifacts: [bench]
run:
  command: %s
  timeout: 60s
runs: %d
metrics:
  - name: work_ms
    regex: 'work_ms: (?P<value>[0-9.]+)'
    better: lower
`, repo, command, runs)
}

func writeJob(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// perfbot runs the command in-process and returns exit code, stdout, stderr.
func perfbot(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), &stdout, &stderr, args)
	return code, stdout.String(), stderr.String()
}

// jsonReport is what the tests read of compare -f json: its one table's
// metrics (a job without a params matrix).
type jsonReport struct {
	Tables []jsonTable `json:"tables"`
}

// metrics are the first table's.
func (r jsonReport) metrics() []jsonMetric {
	if len(r.Tables) == 0 {
		return nil
	}
	return r.Tables[0].Metrics
}

type jsonTable struct {
	Job     string       `json:"job"`
	Metrics []jsonMetric `json:"metrics"`
}

type jsonMetric struct {
	Metric      string `json:"metric"`
	Comparisons []struct {
		Column      int     `json:"column"`
		Change      float64 `json:"change"`
		Significant bool    `json:"significant"`
		Regression  bool    `json:"regression"`
		P           float64 `json:"p"`
	} `json:"comparisons"`
}

// TestCompareRegression is issue 2's end-to-end check: a deliberate 2x
// slowdown is a significant regression, an unchanged commit is not, and a
// second compare builds and runs nothing.
func TestCompareRegression(t *testing.T) {
	r := newGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	same := r.Commit("comment only", map[string]string{"bench.c": testutil.BenchC(1, "a comment changed")})
	slow := r.Commit("do the work twice", map[string]string{"bench.c": testutil.BenchC(2, "a comment changed")})
	jobFile := writeJob(t, jobYAML(r.Dir, 8, "./bench 3000000"))

	code, out, errOut := perfbot(t, "compare", "--alpha", "0.01", jobFile, base, same, slow)
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	if code == exitOK {
		// Not significant: fail unless the measured noise is beyond what
		// 8 pairs resolve for a 2x change (the runs are in the store).
		_, js, _ := perfbot(t, "compare", "--alpha", "0.01", "-f", "json", jobFile, base, slow)
		testutil.SkipInconclusive(t, testutil.Design{Effect: 100, Runs: 8, Confidence: 0.99}, "a 2x slowdown at 8 runs", workSamples(t, js)...)
	}
	if code != exitRegression {
		t.Fatalf("exit status %d, want %d (regression)", code, exitRegression)
	}
	for _, want := range []string{base[:16], same[:27], slow[:27], "work_ms", "%stddev", "%change"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}

	// The same comparison again, as JSON: everything comes from the store.
	code, out, errOut = perfbot(t, "compare", "--alpha", "0.01", "--format", "json", jobFile, base, same, slow)
	if code != exitRegression {
		t.Fatalf("second compare: exit %d, want %d; stderr:\n%s", code, exitRegression, errOut)
	}
	if strings.Contains(errOut, "done in") || strings.Contains(errOut, "perfbot: run ") {
		t.Errorf("second compare built or ran something:\n%s", errOut)
	}
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json output: %v\n%s", err, out)
	}
	found := false
	for _, m := range rep.metrics() {
		if m.Metric != "work_ms" {
			continue
		}
		found = len(m.Comparisons) == 2
		for _, c := range m.Comparisons {
			switch c.Column {
			case 1:
				if c.Regression {
					t.Errorf("unchanged commit reported as a regression: %+v", c)
				}
			case 2:
				if !c.Significant || !c.Regression || c.Change < 50 {
					t.Errorf("2x slowdown not a significant regression of about +100%%: %+v", c)
				}
			}
		}
	}
	if !found {
		t.Fatalf("no work_ms with two comparisons in JSON:\n%s", out)
	}
}

// TestLayoutDiffJob: "perfbot layout diff JOB REV1 REV2" builds both
// revisions of the demo and names the added function as the cause of the
// hot loop's move to the other side of a cache-line boundary.
func TestLayoutDiffJob(t *testing.T) {
	testutil.NeedTool(t, "git", "gcc", "make")
	repo, err := demo.Create(filepath.Join(t.TempDir(), "demo"), demo.Options{History: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	base, text := repo.ByLabel("base"), repo.ByLabel("text-alignment")
	code, out, errOut := perfbot(t, "layout", "diff", repo.JobFile, base.Hash, text.Hash)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	p := demo.DefaultPlacement
	for _, want := range []string{"text_kernel", fmt.Sprintf("added text_trace (%d bytes)", p.Hook),
		fmt.Sprintf("line offset %d -> %d", p.Fast, p.Slow), "crosses a line"} {
		if !strings.Contains(out, want) {
			t.Errorf("layout diff lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := perfbot(t, "layout", "diff", "--artifact", "nope", repo.JobFile, base.Hash, text.Hash); code != exitError || !strings.Contains(errOut, `"nope"`) {
		t.Errorf("unknown artifact: exit %d, %s", code, errOut)
	}
	// --knob: the same commit, the second built with 32 bytes of code
	// padding by the c preset's wrappers: every function moved by 32.
	code, out, errOut = perfbot(t, "layout", "diff", "--knob", "c:text32", repo.JobFile, base.Hash, base.Hash)
	if code != exitOK || strings.Contains(errOut, "warning") || !strings.Contains(errOut, "built with the knob c:text32") {
		t.Fatalf("--knob c:text32: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "+32") || !strings.Contains(out, "text_kernel") {
		t.Errorf("--knob c:text32: want text_kernel moved by +32:\n%s", out)
	}
	if code, _, errOut := perfbot(t, "layout", "diff", "--knob", "c:text7", repo.JobFile, base.Hash, base.Hash); code != exitError || !strings.Contains(errOut, "no variant") {
		t.Errorf("unknown knob: exit %d, %s", code, errOut)
	}
}

// TestCompareMatrix: a params matrix gives one table per atomic job; json
// is then one document with a jobs array, csv one table with a job column.
func TestCompareMatrix(t *testing.T) {
	r := newGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	next := r.Commit("comment", map[string]string{"bench.c": testutil.BenchC(1, "next")})
	jobFile := writeJob(t, jobYAML(r.Dir, 3, "./bench ${n}")+"params:\n  n: [100000, 200000]\n")
	code, out, errOut := perfbot(t, "compare", "--cpu", "none", "--format", "json", jobFile, base, next)
	if code == exitError {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	schematest.ValidateJSON(t, "compare", []byte(out))
	var doc jsonReport
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Tables) != 2 || !strings.Contains(doc.Tables[1].Job, "n=200000") {
		t.Fatalf("json: %v, %d tables; want 2 with names:\n%s", err, len(doc.Tables), out)
	}
	_, out, _ = perfbot(t, "compare", "--cpu", "none", "--format", "csv", jobFile, base, next)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "job,") || strings.Count(out, "job,") != 1 || !strings.Contains(out, "n=100000") || !strings.Contains(out, "n=200000") {
		t.Errorf("csv: want one header with a job column and rows of both jobs:\n%s", out)
	}
	// bmf (from the store): one Bencher document, each benchmark under its
	// atomic job, the head's work_ms as Bencher's latency in ns.
	_, out, errOut = perfbot(t, "compare", "--cpu", "none", "--format", "bmf", jobFile, base, next)
	schematest.ValidateJSON(t, "bmf", []byte(out))
	var bmf map[string]map[string]map[string]float64
	if err := json.Unmarshal([]byte(out), &bmf); err != nil {
		t.Fatalf("bmf: %v\n%s%s", err, out, errOut)
	}
	for _, j := range doc.Tables {
		if lat := bmf[j.Job+"/work_ms"]["latency"]; !(lat["value"] > 0) {
			t.Errorf("bmf: no latency of %s/work_ms:\n%s", j.Job, out)
		}
	}
}

// TestDemo runs the README's first command: the demo's table and a triage
// verdict (the verdicts themselves are checked, with retries against the
// shared machine's noise, in internal/triage's TestDemoVerdicts).
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the demo (about 30 s) in short mode")
	}
	testutil.NeedTool(t, "git", "gcc", "make")
	code, out, errOut := perfbot(t, "demo", "--dir", t.TempDir())
	if code != exitOK {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"%stddev", "text_ms", "significant changes", "verdict: ", "layout suspects", "budget: "} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "perfbot triage ") || !strings.Contains(errOut, "perfbot layout diff ") {
		t.Errorf("demo does not print the commands to try:\n%s", errOut)
	}
}

// TestGC: gc removes the worktrees, and the next compare restores them
// from the cache without building or running anything.
func TestGC(t *testing.T) {
	r := newGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	next := r.Commit("comment", map[string]string{"bench.c": testutil.BenchC(1, "next")})
	jobFile := writeJob(t, jobYAML(r.Dir, 3, "./bench 100000"))
	if code, _, errOut := perfbot(t, "compare", "--cpu", "none", jobFile, base, next); code == exitError {
		t.Fatalf("compare: %s", errOut)
	}
	code, _, errOut := perfbot(t, "gc", jobFile)
	if code != exitOK || !strings.Contains(errOut, "removed 2 worktrees") {
		t.Fatalf("gc: exit %d, %s", code, errOut)
	}
	if entries, _ := os.ReadDir(filepath.Join(filepath.Dir(jobFile), ".perfbot", "worktrees")); len(entries) != 0 {
		t.Errorf("worktrees left: %d", len(entries))
	}
	code, _, errOut = perfbot(t, "compare", "--cpu", "none", jobFile, base, next)
	if code == exitError || strings.Contains(errOut, "done in") || strings.Contains(errOut, "perfbot: run ") {
		t.Errorf("compare after gc built or ran something (exit %d):\n%s", code, errOut)
	}
}

// workSamples are the work_ms runs of each column of compare -f json.
func workSamples(t *testing.T, js string) []testutil.Sample {
	t.Helper()
	var doc struct {
		Tables []struct {
			Columns []struct{ ID string }
			Metrics []struct {
				Metric    string
				Summaries []struct{ Samples []float64 }
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Tables) != 1 {
		t.Fatalf("compare -f json: %v\n%s", err, js)
	}
	var out []testutil.Sample
	for _, m := range doc.Tables[0].Metrics {
		if m.Metric != "work_ms" {
			continue
		}
		for i, s := range m.Summaries {
			out = append(out, testutil.Sample{Name: "work_ms of " + doc.Tables[0].Columns[i].ID[:12], Values: s.Samples})
		}
	}
	return out
}
