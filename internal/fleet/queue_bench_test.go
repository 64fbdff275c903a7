package fleet_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/testutil"

	_ "modernc.org/sqlite"
)

// noopArgs is a job that does nothing: what the queue itself costs.
type noopArgs struct{ N int }

func (noopArgs) Kind() string { return "perfbot.bench_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

func noop(_ context.Context, _ noopArgs) error { return nil }

// BenchmarkQueue measures jobs per second through River on its two
// drivers, one worker taking one job at a time as a benchmark machine
// does, against calling the work directly in-process. Each of b.N jobs is
// inserted, fetched, worked and completed. Two fetch settings: River's
// defaults (FetchCooldown 100ms, FetchPollInterval 1s) and tuned ones
// (1ms, 10ms).
//
//	go test -run '^$' -bench Queue -benchtime 200x ./internal/fleet
func BenchmarkQueue(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			if err := noop(ctx, noopArgs{N: i}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	})
	for _, tuned := range []bool{false, true} {
		name := map[bool]string{false: "default", true: "tuned"}[tuned]
		b.Run("riversqlite/"+name, func(b *testing.B) {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "q.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)")
			if err != nil {
				b.Fatal(err)
			}
			db.SetMaxOpenConns(1) // as the driver's documentation asks
			defer db.Close()
			queueRate(b, riversqlite.New(db), tuned)
		})
		b.Run("riverpgxv5/"+name, func(b *testing.B) {
			pool, err := fleet.Connect(context.Background(), testutil.Postgres(b))
			if err != nil {
				b.Fatal(err)
			}
			defer pool.Close()
			queueRate(b, riverpgxv5.New(pool), tuned)
		})
	}
}

func queueRate[TTx any](b *testing.B, driver riverdriver.Driver[TTx], tuned bool) {
	ctx := context.Background()
	m, err := rivermigrate.New(driver, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		b.Fatal(err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, noopWorker{})
	cfg := &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, Workers: workers}
	if tuned {
		cfg.FetchCooldown, cfg.FetchPollInterval = time.Millisecond, 10*time.Millisecond
	}
	c, err := river.NewClient(driver, cfg)
	if err != nil {
		b.Fatal(err)
	}
	events, cancel := c.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer c.Stop(ctx)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if _, err := c.Insert(ctx, noopArgs{N: i}, nil); err != nil {
			b.Fatal(err)
		}
	}
	for range b.N {
		select {
		case <-events:
		case <-time.After(time.Minute):
			b.Fatal("a job did not complete within a minute")
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
}
