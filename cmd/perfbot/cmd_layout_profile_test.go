package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestLayoutDiffStoredProfile: with the job's perf-profile monitor on, the
// profile stored with the changed commit's runs ranks `perfbot layout diff
// JOB REV REV` by hotness without --profile (issue 13).
func TestLayoutDiffStoredProfile(t *testing.T) {
	testutil.NeedTool(t, "git", "gcc", "make", "perf")
	repo, err := demo.Create(filepath.Join(t.TempDir(), "bench"), demo.Options{History: demo.HistoryTriage})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(repo.JobFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("monitors: [perf-profile]\n")
	f.Close()
	base, text := repo.ByLabel(demo.EffectBase).Hash, repo.ByLabel(demo.EffectTextAlignment).Hash
	code, _, errOut := perfbot(t, "compare", "--cpu", "none", "--runs", "3", repo.JobFile, base, text)
	if code == exitError {
		if strings.Contains(errOut, "perf_event_paranoid") || strings.Contains(errOut, "cannot record") {
			testutil.SkipIncapable(t, "perf cannot record here: %s", errOut)
		}
		t.Fatalf("compare with perf-profile: exit %d\n%s", code, errOut)
	}
	code, out, errOut := perfbot(t, "layout", "diff", repo.JobFile, base, text)
	if code != exitOK || !strings.Contains(errOut, "ranking by the perf profile stored with 3 runs") || !strings.Contains(out, "of profile") {
		t.Errorf("exit %d; stderr:\n%s\nstdout:\n%s\nwant the changes ranked by the stored profile", code, errOut, out)
	}
}
