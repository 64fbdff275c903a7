package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

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

// BenchmarkPutRun stores one run of 10 values per iteration, each committed
// and fsynced.
func BenchmarkPutRun(b *testing.B) {
	s, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	i := 0
	for b.Loop() {
		i++
		if err := s.PutRun(ctx, benchRun("job", "c1", i, 10)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutRun10000 stores one run of 10,000 values per iteration.
func BenchmarkPutRun10000(b *testing.B) {
	s, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	i := 0
	for b.Loop() {
		i++
		if err := s.PutRun(ctx, benchRun("job", "c1", i, 10000)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSamples loads 2 commits x 20 runs x 10,000 metrics (400,000
// values) per iteration.
func BenchmarkSamples(b *testing.B) {
	s, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
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
}
