package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// TestCompareEffect: the second commit prints a figure 2 % above the
// first's in every run, a significant regression; under the default
// --effect 5 it is small (shown, marked, exit 0), with --effect 1 it
// counts (exit 1). --runs 2 is refused before anything is measured.
func TestCompareEffect(t *testing.T) {
	r := testutil.NewGitRepo(t)
	a := r.Commit("v1", map[string]string{"bench.sh": "echo work_ms: 100\n"})
	b := r.Commit("v2", map[string]string{"bench.sh": "echo work_ms: 102\n"})
	jobFile := writeJob(t, fmt.Sprintf(`repo: %s
build: {command: "true"}
run: {command: "sh bench.sh", timeout: 10s}
runs: 6
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`, r.Dir))

	code, _, errOut := perfbot(t, "compare", "--runs", "2", "--cpu", "none", jobFile, a, b)
	if code != exitError || !strings.Contains(errOut, "--runs 2: need at least 3 runs per revision") || strings.Contains(errOut, "build") {
		t.Errorf("--runs 2: exit %d, stderr %q: want exit 2 naming --runs, before any build", code, errOut)
	}

	code, out, errOut := perfbot(t, "compare", "--cpu", "none", "--seed", "1", jobFile, a, b)
	if code != exitOK || !strings.Contains(out, "small regression") || !strings.Contains(out, "under the 5% change that counts") {
		t.Errorf("default effect: exit %d, want 0 and the change marked small:\n%s\n%s", code, out, errOut)
	}
	code, out, _ = perfbot(t, "compare", "--cpu", "none", "--effect", "1", "--format", "markdown", jobFile, a, b)
	if code != exitRegression || !strings.HasPrefix(out, "**1 regression**") {
		t.Errorf("--effect 1: exit %d, want 1 and the regression counted:\n%s", code, out)
	}
}
