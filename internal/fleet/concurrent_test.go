package fleet_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// TestConcurrentComparisons: two comparisons of the same commits queued
// at once are orchestrated side by side by the server; each takes rounds
// under run numbers of its own (claimed in the database), so neither
// overwrites the other's runs, and every round each one compares holds one
// session's runs (a comparison may compare the other's complete rounds).
//
// A third session (a bisection's look) first claims run 1 of the second
// commit alone: both comparisons skip round 1, and neither keeps the first
// commit's run 1 (a round's claims are all or none), so a later
// measurement that asks for that run by number gets it.
func TestConcurrentComparisons(t *testing.T) {
	const runs = 3
	f := newFixture(t, runs, 1500000)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	j, err := f.spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	remote := (&fleet.Client{Pool: f.pool}).For(f.spec, "test")
	run1 := func(commit string) [][]measure.Claim {
		return [][]measure.Claim{{{Key: store.RunKey{Job: j.Key(), Commit: commit, Index: 1}}}}
	}
	if ok, err := remote.Reserve(ctx, "look", run1(f.commits[1])); err != nil || !ok[0] {
		t.Fatalf("claiming run 1 of %.12s: %v %v", f.commits[1], ok, err)
	}
	var ids []int64
	for range 2 {
		row, err := f.server.EnqueueCompare(ctx, fleet.CompareArgs{Job: f.spec, Class: "test", Commits: f.commits})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, row.ID)
	}
	// Both wait for the same builds, then plan at once.
	f.worker(t, "c1", 0)
	var sessions []string
	var took []int // runs per commit each comparison took
	for _, id := range ids {
		out := awaitCompare(ctx, t, f.server.River, id, 100*time.Millisecond)
		if len(out.Rounds) != runs || slices.Contains(out.Rounds, 1) {
			t.Errorf("comparison %d: rounds %v, want %d without round 1 (its run of %.12s is the look's)", id, out.Rounds, runs, f.commits[1])
		}
		// It took the rounds that were not complete when it planned.
		sessions = append(sessions, out.Session)
		took = append(took, out.Taken/len(f.commits))
		// Every round it compares is one session's.
		for _, r := range out.Rounds {
			var of []string
			for _, c := range f.commits {
				recs, err := f.results.RunsWithoutValues(ctx, j.Key(), c, "")
				if err != nil {
					t.Fatal(err)
				}
				for _, rec := range recs {
					if rec.Index == r && !slices.Contains(of, rec.Session) {
						of = append(of, rec.Session)
					}
				}
			}
			if len(of) != 1 {
				t.Errorf("comparison %d: round %d holds the runs of sessions %v", id, r, of)
			}
		}
	}
	// The sessions' pins are gone with their measurements.
	if n := f.server.Pins(); n != 0 {
		t.Errorf("the server keeps %d pins after its measurements ended", n)
	}
	// Round 1 was skipped whole: its run of the first commit is free.
	if ok, err := remote.Reserve(ctx, "later", run1(f.commits[0])); err != nil || !ok[0] {
		t.Errorf("run 1 of %.12s: claimed %v (%v), want it free (a comparison kept it from the round it skipped)", f.commits[0], ok, err)
	}
	// Nothing overwritten: each session's runs are all stored.
	for _, c := range f.commits {
		recs, err := f.results.RunsWithoutValues(ctx, j.Key(), c, "")
		if err != nil {
			t.Fatal(err)
		}
		for k, sess := range sessions {
			n := 0
			for _, rec := range recs {
				if rec.Session == sess {
					n++
				}
			}
			if n != took[k] {
				t.Errorf("%.12s: %d runs of session %.8s stored, it took %d (another measurement overwrote them)", c, n, sess, took[k])
			}
		}
	}
}
