package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/testutil"
)

// waitDemo is a demo repository whose job the lock tests open.
func waitDemo(t *testing.T) *demo.Repo {
	t.Helper()
	testutil.NeedTool(t, "git")
	repo, err := demo.Create(filepath.Join(t.TempDir(), "bench"), demo.Options{History: demo.HistoryTriage})
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// TestWaitGivesUp: while another perfbot (another process) holds the
// machine's measuring lock, --wait gives up after its duration with exit
// status 2 and an error naming the holder.
func TestWaitGivesUp(t *testing.T) {
	repo := waitDemo(t)
	pid := holdMachineLock(t, filepath.Join(t.TempDir(), "machine.lock"))

	t0 := time.Now()
	code, _, stderr := runPerfbot("--wait", "700ms", "gc", repo.JobFile)
	took := time.Since(t0)
	want := "gave up after waiting 700ms for perfbot pid " + strconv.Itoa(pid)
	if code != exitError || !strings.Contains(stderr, want) {
		t.Errorf("perfbot --wait 700ms gc: exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
	if !strings.Contains(stderr, "waiting for perfbot pid "+strconv.Itoa(pid)) {
		t.Errorf("stderr %q does not say whom it waits for", stderr)
	}
	if took < 700*time.Millisecond || took > 20*time.Second {
		t.Errorf("gave up after %s; want about 700ms", took)
	}

	if code, _, stderr := runPerfbot("--wait", "-1s", "gc", repo.JobFile); code != exitError || !strings.Contains(stderr, "--wait -1s") {
		t.Errorf("perfbot --wait -1s: exit %d, stderr %q; want exit 2 naming --wait -1s", code, stderr)
	}
}

// TestWaitFlagsCheckedFirst: a bad flag of compare, bisect or triage is
// refused at once, before the command takes the machine's measuring lock
// (another process holds it here) or builds anything: with a long --wait,
// a check made after the lock would take that long and fail otherwise.
// The checks are the pipelines' Config.Check.
func TestWaitFlagsCheckedFirst(t *testing.T) {
	repo := waitDemo(t)
	holdMachineLock(t, filepath.Join(t.TempDir(), "machine.lock"))
	const wait = "8s"
	j := repo.JobFile
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", j, "main", "case/no-change", "--runs", "2"}, "--runs 2"},
		{[]string{"compare", j, "main", "case/no-change", "--format", "xml"}, `unknown format "xml"`},
		{[]string{"compare", j, "main", "case/no-change", "--variant", "nope"}, `--variant "nope"`},
		{[]string{"bisect", j, "--good", "main", "--bad", "case/no-change", "--metric", "text_ms", "--max-culprits", "-1"}, "--max-culprits -1"},
		{[]string{"bisect", j, "--good", "main", "--bad", "case/no-change", "--metric", "nope_ms"}, `--metric "nope_ms"`},
		{[]string{"bisect", j, "--good", "main", "--bad", "case/no-change", "--metric", "text_ms", "--format", "xml"}, `unknown format "xml"`},
		{[]string{"triage", j, "main", "case/no-change", "--max-runs", "5"}, "--max-runs 5"},
		{[]string{"triage", j, "main", "case/no-change", "--metric", "nope_ms"}, `--metric "nope_ms"`},
		{[]string{"triage", j, "main", "case/no-change", "--format", "xml"}, `unknown format "xml"`},
	} {
		args := append([]string{"--wait", wait}, tc.args...)
		t0 := time.Now()
		code, _, stderr := runPerfbot(args...)
		took := time.Since(t0)
		if code != exitError || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "waiting for") || took > 5*time.Second {
			t.Errorf("perfbot %s: exit %d after %s, stderr %q; want exit 2 at once with %q, without waiting for the lock",
				strings.Join(args, " "), code, took.Round(time.Millisecond), stderr, tc.want)
		}
	}
}
