package fleet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/internal/fleet"
)

// TestFleetWatchSchedule: two servers given the same watch file (as two
// perfbot serve --db --watch; a third, the fixture's, works jobs too) run its cycles one at a time, each an
// interval after the one before (one scheduler, not two); when the
// scheduling server stops, the other takes the cycles over.
func TestFleetWatchSchedule(t *testing.T) {
	f := newFixture(t, 3, 100000)
	f.worker(t, "c1", 0)
	const interval = 2 * time.Second
	watchFile := filepath.Join(filepath.Dir(f.spec.File), "watch.yaml")
	if err := os.WriteFile(watchFile, []byte(fmt.Sprintf("jobs: [%s]\nbranches: [main]\ninterval: %v\n", filepath.Base(f.spec.File), interval)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var mu sync.Mutex
	var logs [2][]string
	var servers [2]*fleet.Server
	for i := range servers {
		results, err := fleet.OpenResults(ctx, f.url, filepath.Join(f.dir, fmt.Sprintf("sched%d-store", i)))
		if err != nil {
			t.Fatal(err)
		}
		defer results.Close()
		logf := func(format string, args ...any) {
			mu.Lock()
			logs[i] = append(logs[i], fmt.Sprintf(format, args...))
			mu.Unlock()
			t.Logf("server %d: "+format, append([]any{i}, args...)...)
		}
		s, err := fleet.NewServer(ctx, fleet.ServerConfig{Pool: f.pool, Results: results, Dir: filepath.Join(f.dir, fmt.Sprintf("sched%d", i)), Log: logf})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(context.Background())
		servers[i] = s
	}
	ctx1, stop1 := context.WithCancel(ctx)
	ctx2, stop2 := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = servers[0].Schedule(ctx1, watchFile, "test", 200*time.Millisecond) }()
	go func() { defer wg.Done(); _ = servers[1].Schedule(ctx2, watchFile, "test", 200*time.Millisecond) }()
	defer func() { stop1(); stop2(); wg.Wait() }()

	done := func() []*rivertype.JobRow {
		var out []*rivertype.JobRow
		for _, row := range jobs(t, f.server.River, "perfbot.watch") {
			if row.State == rivertype.JobStateCompleted {
				out = append(out, row)
			}
		}
		slices.SortFunc(out, func(a, b *rivertype.JobRow) int { return a.CreatedAt.Compare(b.CreatedAt) })
		return out
	}
	waitFor := func(n int, within time.Duration) []*rivertype.JobRow {
		t.Helper()
		for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
			if rows := done(); len(rows) >= n || time.Now().After(deadline) {
				return rows
			}
		}
	}
	rows := waitFor(4, 60*time.Second)
	if len(rows) < 4 {
		t.Fatalf("%d cycles done in 60s, want 4", len(rows))
	}
	// One scheduler: each cycle is queued an interval after the last ended.
	for i := 1; i < len(rows); i++ {
		if gap := rows[i].CreatedAt.Sub(*rows[i-1].FinalizedAt); gap < interval-200*time.Millisecond {
			t.Errorf("cycle %d queued %v after cycle %d ended, want an interval (%v): two schedulers", rows[i].ID, gap, rows[i-1].ID, interval)
		}
	}
	mu.Lock()
	sched := -1
	for i, l := range logs {
		if slices.ContainsFunc(l, func(s string) bool { return strings.Contains(s, "this server schedules its cycles") }) {
			if sched >= 0 {
				t.Errorf("both servers schedule the cycles")
			}
			sched = i
		}
	}
	mu.Unlock()
	if sched < 0 {
		t.Fatal("no server says it schedules the cycles")
	}
	// The scheduler stops; the other takes over.
	[]func(){stop1, stop2}[sched]()
	n := len(done())
	if rows := waitFor(n+2, 30*time.Second); len(rows) < n+2 {
		t.Fatalf("%d cycles done after the scheduler stopped, want %d", len(rows), n+2)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(logs[1-sched], func(s string) bool { return strings.Contains(s, "this server schedules its cycles") }) {
		t.Errorf("the other server did not take the cycles over")
	}
}
