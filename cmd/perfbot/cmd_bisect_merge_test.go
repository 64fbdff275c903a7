package main

import (
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestBisectMerge: the real regression came in through a merge (the demo's
// "bisect-merge" history: 16 first-parent commits, a 5-commit branch with
// the real regression, the alignment shift on main). Under forced
// alignment the first-parent search lands on the merge; its second parent
// reproduces the change against the merge base, so the merged side is
// bisected, and the culprit named is the commit inside the branch, with the
// merge it came through; the ranges the culprit leaves hold no change. A
// run whose check does not confirm a culprit, or that names the merge
// because the search inside it was not confirmed, is retried once.
func TestBisectMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("bisects 16 real commits and a merged branch")
	}
	testutil.NeedTool(t, "git", "gcc", "make")
	r, err := demo.Create(filepath.Join(t.TempDir(), "kvstore"), demo.Options{History: demo.HistoryBisectMerge, Commits: 16, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	real, merge := r.ByLabel(demo.EffectRealRegression), r.ByLabel("merge")
	if real.Branch != "topic" {
		t.Fatalf("the real regression is on %s, not on the merged branch", real.Branch)
	}
	for attempt := 1; ; attempt++ {
		code, doc, errOut := bisectRun(t, r.JobFile, "--good", r.Commits[0].Hash, "--bad", r.Commits[len(r.Commits)-1].Hash,
			"--metric", "text_ms", "--layout-robust", "forced", "--restart", freshStore(t, attempt))
		if doc.Found {
			res := doc.Result
			if res.Culprit.Hash == merge.Hash && code == exitOK && attempt == 1 {
				// The merge is confirmed but the search inside it was not
				// (the shared machine's bursts of load misled a step of
				// its 5 commits): a less precise answer, not a wrong one.
				t.Logf("attempt 1: the culprit named is the merge; its inside was not confirmed; retrying")
				continue
			}
			if res.Culprit.Hash != real.Hash || code != exitOK {
				t.Fatalf("exit %d, confirmed culprit %s, want %s inside the merged branch:\n%s", code, res.Culprit.Hash[:12], real.Hash[:12], errOut)
			}
			if len(res.Culprits) != 1 || len(res.Culprits[0].Via) != 1 || res.Culprits[0].Via[0].Hash != merge.Hash {
				t.Fatalf("culprits %+v: want the real regression alone, through the merge %s:\n%s", res.Culprits, merge.Hash[:12], errOut)
			}
			kinds := map[string]string{}
			for _, rg := range res.Ranges {
				kinds[rg.Kind] += rg.Status + " "
			}
			if kinds["main"] != "culprit " || kinds["merge"] != "culprit " {
				t.Errorf("ranges %+v: want the main one landing on the merge and the merge's inside naming the culprit", res.Ranges)
			}
			t.Logf("attempt %d: %d builds, %d runs, ranges %v", attempt, res.Builds, res.Runs, kinds)
			return
		}
		if code != exitRegression || attempt == 2 {
			t.Fatalf("attempt %d: exit %d, no confirmed culprit:\n%s", attempt, code, errOut)
		}
		t.Logf("attempt %d: the check did not confirm a culprit; retrying", attempt)
	}
}
