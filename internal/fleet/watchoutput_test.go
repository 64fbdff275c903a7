package fleet

import (
	"context"
	"slices"
	"testing"
)

// TestRescueSparesFinishedCycle: a running watch cycle whose liveness
// lock is free is queued again only when it stored no outcome, or stored
// it longer than WatchRescueGrace ago (its server died before River
// recorded the end): a cycle that just finished, which River is about to
// complete, keeps its outcome. The stored outcome is what a later attempt
// returns.
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
	rescued := func(what string, want bool) {
		t.Helper()
		ids, err := rescueWatches(ctx, pool, c)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(ids, id); got != want {
			t.Errorf("%s: queued again %v, want %v", what, got, want)
		}
	}
	running()
	rescued("a running cycle with a free lock and no outcome", true)

	running()
	want := WatchOutput{Log: []string{"watch: 2 commits tested, 1 findings"}, Tested: 2, Findings: []string{"f.md"},
		Regressions: []string{"8c42fc0fa850"}, Status: 1}
	if err := storeWatchOutput(ctx, pool, id, want); err != nil {
		t.Fatal(err)
	}
	rescued("a cycle that stored its outcome a moment ago", false)

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
	rescued("a cycle that stored its outcome a minute ago and still runs", true)

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
