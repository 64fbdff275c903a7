package store_test

import (
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// The benchmarks run each case on both databases, side by side: SQLite in
// a folder (WAL, synchronous FULL) and PostgreSQL on testutil's server with
// durable commits (fsync, full_page_writes and synchronous_commit on), both
// on the same disk:
//
//	PERFBOT_TEST_POSTGRES_DURABLE=1 go test -run '^$' -bench . ./internal/store/
//
// The figures are in docs/store.md.

func benchRun(job, commit string, idx, nvalues int) *store.RunRecord {
	r := &store.RunRecord{
		RunKey:  store.RunKey{Job: job, Commit: commit, Index: idx},
		Status:  store.RunOK,
		CPU:     3,
		Started: time.Now(),
		Usage:   metric.Usage{Wall: time.Second, User: time.Second, MaxRSSKiB: 1 << 20},
		Session: "0f8c2a1e-5b7d-4c3a-9e61-2d4b8a7f3c90",
		Machine: "bench-07.perf.example.org",
		Values:  make([]metric.Value, nvalues),
	}
	for i := range r.Values {
		r.Values[i] = metric.Value{Name: fmt.Sprintf("metric-%05d", i), Unit: "ns", Better: metric.LowerIsBetter, Value: float64(idx*nvalues + i)}
	}
	return r
}

// benchStores runs fn as a sub-benchmark per database. open opens a new
// Store on the sub-benchmark's one fresh database, closed when b ends.
func benchStores(b *testing.B, fn func(b *testing.B, open func() *store.Store)) {
	for _, backend := range []struct {
		name  string
		fresh func(b *testing.B) string
		open  func(b *testing.B, where string) (*store.Store, error)
	}{
		{"sqlite",
			func(b *testing.B) string { return b.TempDir() },
			func(_ *testing.B, dir string) (*store.Store, error) { return store.Open(dir) }},
		{"postgres",
			durablePostgres,
			func(b *testing.B, url string) (*store.Store, error) {
				return store.OpenURL(b.Context(), url, store.Options{Dir: b.TempDir()})
			}},
	} {
		b.Run(backend.name, func(b *testing.B) {
			where := backend.fresh(b)
			fn(b, func() *store.Store {
				s, err := backend.open(b, where)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				return s
			})
		})
	}
}

// durablePostgres returns a fresh database of testutil.Postgres, and
// skips b unless the server makes commits durable (fsync and
// synchronous_commit on), as SQLite's are: testutil's private server does
// with PERFBOT_TEST_POSTGRES_DURABLE=1.
func durablePostgres(b *testing.B) string {
	url := testutil.Postgres(b)
	db, err := sql.Open("pgx", url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var fsync, commit string
	if err := db.QueryRow(`SELECT current_setting('fsync'), current_setting('synchronous_commit')`).Scan(&fsync, &commit); err != nil {
		b.Fatal(err)
	}
	if fsync != "on" || commit == "off" {
		b.Skipf("the PostgreSQL server has fsync %s, synchronous_commit %s: its commits are not durable and cost less than SQLite's; set %s=1", fsync, commit, testutil.PostgresDurableEnv)
	}
	return url
}

// BenchmarkPutRun stores one run of 10 values per iteration, each committed
// and fsynced.
func BenchmarkPutRun(b *testing.B) {
	benchStores(b, func(b *testing.B, open func() *store.Store) {
		benchPutRun(b, open(), 10)
	})
}

// BenchmarkPutRun10000 stores one run of 10,000 values per iteration.
func BenchmarkPutRun10000(b *testing.B) {
	benchStores(b, func(b *testing.B, open func() *store.Store) {
		benchPutRun(b, open(), 10000)
	})
}

func benchPutRun(b *testing.B, s *store.Store, nvalues int) {
	ctx := b.Context()
	i := 0
	for b.Loop() {
		i++
		if err := s.PutRun(ctx, benchRun("job", "c1", i, nvalues)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutRunWorkers is a fleet's load: 8 workers, each with a Store of
// its own (as each worker process has), store runs of 10 values at once;
// ns/op is the store's time per run, all workers together.
func BenchmarkPutRunWorkers(b *testing.B) {
	const workers = 8
	benchStores(b, func(b *testing.B, open func() *store.Store) {
		stores := make([]*store.Store, workers)
		for i := range stores {
			stores[i] = open()
		}
		var next, worker atomic.Int64
		b.SetParallelism((workers + 1) / 2) // GOMAXPROCS 2 on the benchmark machine
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			s := stores[int(worker.Add(1)-1)%workers]
			for pb.Next() {
				if err := s.PutRun(b.Context(), benchRun("job", "c1", int(next.Add(1)), 10)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkSamples loads 2 commits x 20 runs x 10,000 metrics (400,000
// values) per iteration.
func BenchmarkSamples(b *testing.B) {
	benchStores(b, func(b *testing.B, open func() *store.Store) {
		s := open()
		ctx := b.Context()
		commits := []string{"c1", "c2"}
		for _, c := range commits {
			for i := 1; i <= 20; i++ {
				if err := s.PutRun(ctx, benchRun("job", c, i, 10000)); err != nil {
					b.Fatal(err)
				}
			}
		}
		// A failed run, whose values must be skipped.
		failed := benchRun("job", "c1", 21, 10000)
		failed.Status = store.RunCrashed
		if err := s.PutRun(ctx, failed); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			m, err := s.Samples(ctx, "job", commits, "")
			if err != nil {
				b.Fatal(err)
			}
			if n := len(m["c2"]["metric-09999"]); n != 20 {
				b.Fatalf("got %d samples, want 20", n)
			}
		}
		b.ReportMetric(400000, "values/op")
	})
}
