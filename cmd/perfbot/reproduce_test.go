package main

import (
	"io"
	"strings"
	"testing"
)

// TestReproduceEveryFlag: the "to reproduce" line of bisect and triage
// repeats every flag that was set (issue 12: it dropped --job, --alpha,
// --effect, --runs, --knobs, --layouts, --store and --seed, so the printed
// command started another bisection), with revisions and the metric as
// resolved.
func TestReproduceEveryFlag(t *testing.T) {
	a := &app{stdout: io.Discard, stderr: io.Discard}
	cmd := newBisectCmd(a)
	args := []string{"--good", "v1", "--bad", "HEAD", "--job", "size=4k", "--alpha", "0.05", "--effect", "3",
		"--runs", "12", "--knobs", "go", "--layouts", "6", "--store", "/tmp/my store", "--seed", "7", "--improvement", "--layout-robust", "sweep", "--restart"}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	got := reproduce(cmd, []string{"jobs/bench.yaml"}, map[string]string{"good": "0123456789ab", "bad": "ba9876543210", "metric": "text_ms"})
	for _, want := range []string{"bisect jobs/bench.yaml", "--good=0123456789ab", "--bad=ba9876543210", "--metric=text_ms",
		"--job=size=4k", "--alpha=0.05", "--effect=3", "--runs=12", "--preset=go", "--layouts=6", "--store='/tmp/my store'",
		"--seed=7", "--improvement", "--layout-robust=sweep"} {
		if !strings.Contains(got, want) {
			t.Errorf("reproduce line %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "HEAD") || strings.Contains(got, "--format") || strings.Contains(got, "--restart") || strings.Contains(got, "--knobs") {
		t.Errorf("reproduce line %q: want resolved revisions, no flags that were not set, no --restart and no deprecated --knobs", got)
	}
}
