package fleet_test

import (
	"context"
	"encoding/json"
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

// The advisory lock classes of a watch file's scheduler ("pfbw") and of a
// watch cycle's liveness ("pfbl"): schedule.go, watchrescue.go.
const (
	schedulerLockClass = 0x70666277
	livenessLockClass  = 0x7066626c
)

// dropLockConn terminates the PostgreSQL backend holding an advisory lock
// of class: a dropped connection, as a network fault or a restarted
// PgBouncer makes one.
func dropLockConn(t *testing.T, f *fixture, class int) {
	t.Helper()
	var pid int
	if err := f.pool.QueryRow(context.Background(), `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND granted`, class).Scan(&pid); err != nil {
		t.Fatalf("the holder of lock class %#x: %v", class, err)
	}
	if _, err := f.pool.Exec(context.Background(), `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
}

// TestWatchLocksLost: two servers schedule one watch file (no machine of
// the class is live yet, so the cycle waits in the middle). The
// scheduler's lock connection is dropped: it stops scheduling within
// seconds and the other server takes the file over. The cycle's liveness
// lock connection is dropped: its server stops the cycle at once (it
// does not go on beside the server that rescues it). A worker then comes
// up and the one cycle completes, once.
func TestWatchLocksLost(t *testing.T) {
	f := newFixture(t, 3, 100000)
	stopCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = f.server.Stop(stopCtx) // only the two scheduling servers work the cycle
	watchFile := filepath.Join(filepath.Dir(f.spec.File), "watch.yaml")
	if err := os.WriteFile(watchFile, []byte(fmt.Sprintf("class: test\njobs: [%s]\nbranches: [main]\ninterval: 1h\n", filepath.Base(f.spec.File))), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var mu sync.Mutex
	var logs [2][]string
	var wg sync.WaitGroup
	for i := range 2 {
		results, err := fleet.OpenResults(ctx, f.url, filepath.Join(f.dir, fmt.Sprintf("lock%d-store", i)))
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
		s, err := fleet.NewServer(ctx, fleet.ServerConfig{Pool: f.pool, Results: results, Dir: filepath.Join(f.dir, fmt.Sprintf("lock%d", i)),
			Log: logf, LockPing: 100 * time.Millisecond, DeadAfter: fixtureDeadAfter})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(context.Background())
		defer wg.Wait() // the schedulers end before their servers stop
		defer stop()
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Schedule(ctx, watchFile, "test", 200*time.Millisecond) }()
	}
	said := func(i int, what string) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(logs[i], func(s string) bool { return strings.Contains(s, what) })
	}
	t0 := time.Now()
	await := func(what string, within time.Duration, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(within); !cond(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v", what, within)
			}
		}
		t.Logf("%s (at %.1fs)", what, time.Since(t0).Seconds())
	}
	c, err := fleet.InsertOnly(f.pool)
	if err != nil {
		t.Fatal(err)
	}
	sched := -1
	await("a server schedules the file and its cycle runs", 20*time.Second, func() bool {
		for i := range 2 {
			if said(i, "this server schedules its cycles") {
				sched = i
			}
		}
		ws := jobs(t, c, "perfbot.watch")
		return sched >= 0 && len(ws) == 1 && ws[0].State == rivertype.JobStateRunning
	})

	dropLockConn(t, f, schedulerLockClass)
	dropped := time.Now()
	await("the scheduler notices its lost lock", 3*time.Second, func() bool { return said(sched, "no longer schedules its cycles") })
	await("the other server takes the file over", 3*time.Second, func() bool { return said(1-sched, "this server schedules its cycles") })
	t.Logf("scheduling moved %.1fs after the lock's connection dropped", time.Since(dropped).Seconds())

	dropLockConn(t, f, livenessLockClass)
	await("the cycle's server stops it", 3*time.Second, func() bool {
		return said(0, "stopped: its liveness lock is lost") || said(1, "stopped: its liveness lock is lost")
	})

	f.worker(t, "l1", 0)
	var row *rivertype.JobRow
	await("the cycle completes", 90*time.Second, func() bool {
		ws := jobs(t, c, "perfbot.watch")
		if len(ws) != 1 {
			t.Fatalf("%d watch jobs, want the one cycle", len(ws))
		}
		row = ws[0]
		return row.State == rivertype.JobStateCompleted
	})
	var out fleet.WatchOutput
	if err := json.Unmarshal(row.Output(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Tested != 1 || out.Status != 0 {
		t.Errorf("the cycle: %d commits tested, status %d, errors %v; want the head, 0", out.Tested, out.Status, out.Errors)
	}
}
