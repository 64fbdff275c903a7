package fleet_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestReserveOrder: two sessions claim the same run numbers at once, one
// listing them up and the other down (as a comparison's round-major and a
// bisection's target-major claims differ): every run number goes to
// exactly one of them, a group is all or none, and PostgreSQL never has
// to break a deadlock (Reserve claims in key order; the retry it has for
// a deadlock is not needed, and counted).
func TestReserveOrder(t *testing.T) {
	ctx := context.Background()
	pool, err := fleet.Connect(ctx, testutil.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := fleet.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var retries atomic.Int32
	c := &fleet.Client{Pool: pool, Log: func(format string, args ...any) {
		retries.Add(1)
		t.Logf(format, args...)
	}}
	r := c.For(fleet.JobSpec{}, "test")
	const n = 400
	for try := range 4 {
		job := fmt.Sprintf("job-%d", try)
		// Rounds of two targets, all or none, listed up by one session
		// and down by the other.
		groups := func(down bool) [][]measure.Claim {
			var gs [][]measure.Claim
			for i := 1; i <= n; i++ {
				var g []measure.Claim
				for _, commit := range []string{"aaaa", "bbbb"} {
					g = append(g, measure.Claim{Key: store.RunKey{Job: job, Commit: commit, Index: i}})
				}
				gs = append(gs, g)
			}
			if down {
				slices.Reverse(gs)
				for _, g := range gs {
					slices.Reverse(g)
				}
			}
			return gs
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		got := make([][]bool, 2)
		errs := make([]error, 2)
		for s := range 2 {
			wg.Go(func() {
				<-start
				got[s], errs[s] = r.Reserve(ctx, fmt.Sprintf("s%d", s), groups(s == 1))
			})
		}
		close(start)
		wg.Wait()
		for s, err := range errs {
			if err != nil {
				t.Fatalf("try %d: session s%d: %v", try, s, err)
			}
		}
		slices.Reverse(got[1]) // in round order
		for i := range n {
			if got[0][i] == got[1][i] {
				t.Errorf("try %d: round %d granted to s0 %v and to s1 %v: want exactly one", try, i+1, got[0][i], got[1][i])
			}
			var holders []string
			rows, err := pool.Query(ctx, `SELECT session FROM perfbot_fleet_claims WHERE job = $1 AND idx = $2`, job, i+1)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var h string
				if err := rows.Scan(&h); err != nil {
					t.Fatal(err)
				}
				holders = append(holders, h)
			}
			rows.Close()
			want := "s0"
			if got[1][i] {
				want = "s1"
			}
			if len(holders) != 2 || holders[0] != want || holders[1] != want {
				t.Errorf("try %d: round %d held by %v, want both its runs by %s", try, i+1, holders, want)
			}
		}
	}
	if n := retries.Load(); n > 0 {
		t.Errorf("PostgreSQL broke %d deadlocks between the two sessions' claims", n)
	}
}
