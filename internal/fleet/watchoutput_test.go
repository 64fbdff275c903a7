package fleet

import (
	"context"
	"slices"
	"testing"
)

// TestRescueSparesFinishedCycle: a running watch cycle whose liveness
// lock is free is queued again only when two looks in a row find the same
// attempt so (a failed cycle that River makes retryable in between keeps
// River's backoff), and only when it stored no outcome, or stored it
// longer than WatchRescueGrace ago (its server died before River recorded
// the end): a cycle that just finished, which River is about to complete,
// keeps its outcome. The stored outcome is what a later attempt returns.
func TestRescueSparesFinishedCycle(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	c, err := InsertOnly(pool)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Insert(ctx, WatchArgs{File: "/nonexistent/watch.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := res.Job.ID
	running := func() {
		t.Helper()
		if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
			attempted_at = now() - interval '1 minute' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
	// rescued takes two looks, as the rescue loop does, WatchRescueEvery
	// apart; between runs what happened in between.
	rescued := func(what string, want bool, between func()) {
		t.Helper()
		ids, seen, err := rescueWatches(ctx, pool, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ids, id) {
			t.Errorf("%s: queued again at the first look", what)
		}
		if between != nil {
			between()
		}
		if ids, _, err = rescueWatches(ctx, pool, c, seen); err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(ids, id); got != want {
			t.Errorf("%s: queued again %v, want %v", what, got, want)
		}
	}
	running()
	rescued("a running cycle with a free lock and no outcome", true, nil)

	// A cycle that failed: its server let go of the lock, and River made
	// it retryable (with its backoff) before the second look.
	running()
	rescued("a failed cycle that River made retryable between two looks", false, func() {
		if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'retryable', scheduled_at = now() + interval '1 minute' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	})
	// A retry that started between the looks is another attempt: judged
	// afresh.
	running()
	rescued("a new attempt started between two looks", false, func() {
		if _, err := pool.Exec(ctx, `UPDATE river_job SET attempt = 2 WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	})

	running()
	want := WatchOutput{Log: []string{"watch: 2 commits tested, 1 findings"}, Tested: 2, Findings: []string{"f.md"},
		Regressions: []string{"8c42fc0fa850"}, Status: 1}
	if err := storeWatchOutput(ctx, pool, id, want); err != nil {
		t.Fatal(err)
	}
	rescued("a cycle that stored its outcome a moment ago", false, nil)

	// The first outcome stored stands.
	if err := storeWatchOutput(ctx, pool, id, WatchOutput{Status: 0}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := storedWatchOutput(ctx, pool, id)
	if err != nil || !ok || got.Status != 1 || got.Tested != 2 || !slices.Equal(got.Regressions, want.Regressions) {
		t.Errorf("stored outcome: %+v %v (%v), want %+v", got, ok, err, want)
	}

	if _, err := pool.Exec(ctx, `UPDATE perfbot_fleet_watch_outputs SET stored = now() - interval '1 minute'`); err != nil {
		t.Fatal(err)
	}
	rescued("a cycle that stored its outcome a minute ago and still runs", true, nil)

	if _, ok, err := storedWatchOutput(ctx, pool, id+1000); ok || err != nil {
		t.Errorf("the outcome of a cycle that stored none: %v (%v)", ok, err)
	}
	// Outcomes of jobs River no longer holds go after an hour.
	if _, err := pool.Exec(ctx, `DELETE FROM river_job WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if err := dropWatchOutputs(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := storedWatchOutput(ctx, pool, id); !ok {
		t.Error("an outcome a minute old was dropped")
	}
	if _, err := pool.Exec(ctx, `UPDATE perfbot_fleet_watch_outputs SET stored = now() - interval '2 hours'`); err != nil {
		t.Fatal(err)
	}
	if err := dropWatchOutputs(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := storedWatchOutput(ctx, pool, id); ok {
		t.Error("the outcome of a job River no longer holds stayed")
	}
}
