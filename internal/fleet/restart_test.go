package fleet_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/store"
)

// TestServerRestart: the server is stopped in the middle of a comparison
// and another one started on the same database: the comparison resumes
// from what is stored and completes, with as many runs as it would have
// taken without the restart, all OK.
func TestServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for River's scheduler on the new server")
	}
	const runs = 6
	f := newFixture(t, runs, 4000000)
	f.worker(t, "r1", 0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	row, err := f.server.EnqueueCompare(ctx, fleet.CompareArgs{Job: f.spec, Class: "test", Commits: f.commits})
	if err != nil {
		t.Fatal(err)
	}
	for roundRunning(t, f, 2) == nil {
		if ctx.Err() != nil {
			t.Fatal("no round ran")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop, cancelStop := context.WithTimeout(ctx, 20*time.Second)
	if err := f.server.Stop(stop); err != nil {
		t.Fatalf("stopping the server: %v", err)
	}
	cancelStop()
	results, err := fleet.OpenResults(ctx, f.url, filepath.Join(f.dir, "server2-store"))
	if err != nil {
		t.Fatal(err)
	}
	defer results.Close()
	s2, err := fleet.NewServer(ctx, fleet.ServerConfig{Pool: f.pool, Results: results, Dir: filepath.Join(f.dir, "server2"),
		DeadAfter: 3 * time.Second, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s2.Stop(context.Background())
	out := awaitCompare(ctx, t, s2.River, row.ID, 200*time.Millisecond)
	if len(out.Rounds) != runs {
		t.Errorf("rounds %v: want %d", out.Rounds, runs)
	}
	j, _ := f.spec.Load()
	for _, c := range f.commits {
		recs, err := results.RunsWithoutValues(ctx, j.Key(), c, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%.12s: %d runs stored", c, len(recs))
		if len(recs) != runs {
			t.Errorf("%.12s: %d runs stored, want %d", c, len(recs), runs)
		}
		for _, r := range recs {
			if r.Status != store.RunOK || r.Machine != "r1" {
				t.Errorf("run %s: %s on %q", r.RunKey, r.Status, r.Machine)
			}
		}
	}
}
