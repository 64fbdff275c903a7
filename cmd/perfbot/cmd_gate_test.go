package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// gateJobYAML is a job over testutil.SeqBenchC whose figure comes from a
// fixed sequence of about ±1 % (the truth of every gate is known), with
// README.md ignored.
func gateJobYAML(t *testing.T, repo string) string {
	seq := []float64{1.000, 1.012, 0.991, 1.007, 0.996, 1.015, 0.989, 1.004, 0.998, 1.010, 0.993}
	return writeJob(t, fmt.Sprintf(`repo: %s
build:
  command: make bench
  artifacts: [bench]
run:
  command: %s
  timeout: 30s
runs: 3
metrics:
  - name: work_ms
    regex: 'work_ms: (?P<value>[0-9.]+)'
    better: lower
ignore: ['*.md']
gate:
  threshold: 5
  max_runs: 40
`, repo, testutil.SeqRunCommand(t, seq)))
}

// TestGateCommand: perfbot gate fails a planted 2x slowdown (exit 1),
// passes a no-op change (exit 0) with the JSON report matching its schema
// and the Markdown appended to $GITHUB_STEP_SUMMARY and written to
// --comment, verdict line on top, and takes no run for a README-only
// change.
func TestGateCommand(t *testing.T) {
	r := newGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": testutil.SeqBenchC(100), "Makefile": testutil.SeqBenchMakefile, "README.md": "x\n"})
	slow := r.Commit("slow", map[string]string{"bench.c": testutil.SeqBenchC(200)})
	r.Git("checkout", "-q", "-b", "noop", base)
	noop := r.Commit("no-op", map[string]string{"bench.c": testutil.SeqBenchC(100) + "/* a comment */\nint unused_symbol = 1;\n"})
	docs := r.Commit("docs", map[string]string{"README.md": "more\n"})
	job := gateJobYAML(t, r.Dir)
	st := filepath.Join(t.TempDir(), "store")

	code, out, errOut := perfbot(t, "gate", "--cpu", "none", "--seed", "1", "--store", st, "--no-triage", job, base, slow)
	if code != exitRegression || !strings.HasPrefix(out, "regression: work_ms +") || !strings.Contains(firstLine(out), "beyond the 5 % threshold") {
		t.Fatalf("2x slowdown: exit %d, first line %q; want 1 and a regression:\n%s\n%s", code, firstLine(out), out, errOut)
	}

	summary := filepath.Join(t.TempDir(), "summary.md")
	if err := os.WriteFile(summary, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	comment := filepath.Join(t.TempDir(), "comment.md")
	code, out, errOut = perfbot(t, "gate", "--cpu", "none", "--seed", "1", "--store", st, "-f", "json", "--comment", comment, job, base, noop)
	if code != exitOK {
		t.Fatalf("no-op: exit %d; want 0:\n%s\n%s", code, out, errOut)
	}
	schematest.ValidateJSON(t, "gate", []byte(out))
	var doc struct {
		Outcome, Line string
		Metrics       []struct {
			Metric        string
			Gated         bool
			DetectablePct *float64 `json:"detectable_pct"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Outcome != "pass" || !strings.HasPrefix(doc.Line, "no regression: work_ms ") || !strings.Contains(doc.Line, "smallest detectable change here") {
		t.Errorf("no-op: outcome %q, line %q", doc.Outcome, doc.Line)
	}
	data, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	md, ok := strings.CutPrefix(string(data), "earlier step\n")
	if !ok || !strings.HasPrefix(md, "**no regression: work\\_ms ") {
		t.Errorf("step summary: want the earlier step kept and the verdict line on top, got:\n%s", data)
	}
	if c, err := os.ReadFile(comment); err != nil || string(c) != md {
		t.Errorf("--comment: %v; want the step summary's Markdown, got:\n%s", err, c)
	}

	t.Setenv("GITHUB_STEP_SUMMARY", "")
	code, out, errOut = perfbot(t, "gate", "--cpu", "none", "--seed", "1", "--store", st, noop, docs)
	if code != exitError {
		// The job file comes first: noop is no job file.
		t.Errorf("arguments out of order: exit %d, want 2", code)
	}
	code, out, errOut = perfbot(t, "gate", "--cpu", "none", "--seed", "1", "--store", st, job, noop, docs)
	if want := "unchanged: only ignored paths changed: README.md (0 runs)"; code != exitOK || firstLine(out) != want {
		t.Errorf("README-only: exit %d, first line %q; want 0 and %q\n%s", code, firstLine(out), want, errOut)
	}
}

// TestGateBadInput: bad flags fail with exit status 2 and a message
// naming what is wrong, before anything is built.
func TestGateBadInput(t *testing.T) {
	testutil.NeedTool(t, "git")
	r := testutil.NewGitRepo(t)
	base := r.Commit("base", map[string]string{"README.md": "x\n"})
	job := gateJobYAML(t, r.Dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gate", job, base}, "accepts 3 arg(s)"},
		{[]string{"gate", job, base, base, "-f", "csv"}, `unknown format "csv" (valid: text, markdown, json, bmf)`},
		{[]string{"gate", job, base, base, "--max-runs", "2"}, "--max-runs 2: need at least 10 runs of each revision"},
		{[]string{"gate", job, base, base, "--threshold", "-1"}, "--threshold -1: want a change in percent above 0"},
		{[]string{"gate", job, base, base, "--metric", "nope_ms"}, `--metric "nope_ms"`},
		{[]string{"gate", job, base, base, "--alpha", "0.7"}, "--alpha 0.7"},
		{[]string{"gate", job, base, "no-such-branch"}, "no-such-branch"},
		{[]string{"gate", filepath.Join(r.Dir, "README.md"), base, base}, "want a job file"},
	} {
		code, _, stderr := perfbot(t, tc.args...)
		if code != exitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("perfbot %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
