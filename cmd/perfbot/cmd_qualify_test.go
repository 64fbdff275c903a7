package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// TestQualifyCommand qualifies this machine for a C benchmark built with
// gcc, with a small budget (20 runs, 40 resampled gates; the time budget is generous because waiting for another perfbot's measuring lock counts in it): the JSON
// report matches its schema, holds the runner and the figures, and the
// exit status says fit (0) or not (1), never an error. Whether this
// loaded machine is fit is not known in advance; the decisions are tested
// on known data in internal/qualify. A bad flag is exit 2, naming it.
func TestQualifyCommand(t *testing.T) {
	testutil.NeedTool(t, "gcc", "make")
	r := newGitRepo(t)
	r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	jobFile := filepath.Join(filepath.Dir(r.Dir), "bench.yaml")
	if err := os.WriteFile(jobFile, []byte(jobYAML(r.Dir, 3, "./bench 20000")+"gate: {max_runs: 10}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := perfbot(t, "qualify", jobFile, "--max-runs", "5")
	if code != exitError || !strings.Contains(errOut, "--max-runs 5: need at least 20 runs") {
		t.Errorf("--max-runs 5: exit %d, %s", code, errOut)
	}
	code, out, errOut := perfbot(t, "qualify", jobFile, "HEAD", "--max-runs", "20", "--gates", "40", "--max-time", "15m", "--cpu", "none", "-f", "json")
	if code != 0 && code != 1 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	schematest.ValidateJSON(t, "qualify", []byte(out))
	var d struct {
		Fit     bool
		Runs    int
		Runner  struct{ Hostname, Kernel string }
		AA      struct{ Gates int }
		Metrics []struct {
			Name string
		}
		Sentence string
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Runs != 20 || d.AA.Gates != 40 || d.Runner.Hostname == "" || d.Runner.Kernel == "" || len(d.Metrics) != 1 || d.Metrics[0].Name != "work_ms" ||
		d.Fit != (code == 0) || !strings.HasPrefix(d.Sentence, "runner ") {
		t.Errorf("exit %d, report %+v", code, d)
	}
	if code == 1 && !strings.Contains(errOut, "not fit for the gate") {
		t.Errorf("exit 1 without the reason: %s", errOut)
	}
}
