package bisect

import (
	"context"
	"math"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lockedSim is a simulated measurer that takes concurrent Measure calls,
// as a fleet's does.
type lockedSim struct {
	mu sync.Mutex
	*simMeasurer
	in, most atomic.Int64 // calls in Measure now, and the most at once
}

func (l *lockedSim) Measure(ctx context.Context, reqs []Request) (*Batch, error) {
	n := l.in.Add(1)
	defer l.in.Add(-1)
	for m := l.most.Load(); n > m && !l.most.CompareAndSwap(m, n); m = l.most.Load() {
	}
	time.Sleep(time.Millisecond) // long enough for the other looks to come in
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.simMeasurer.Measure(ctx, reqs)
}

// TestParallelFindsCulprit: the k-ary search (3 candidates at once) names
// a 30 % regression in 63 commits across many histories, in fewer
// parallel steps than the sequential search has steps, never taking a run
// twice.
func TestParallelFindsCulprit(t *testing.T) {
	const cases = 60
	wrong, parSteps, seqSteps, parRuns, seqRuns := 0, 0, 0, 0, 0
	for seed := range int64(cases) {
		rng := rand.New(rand.NewSource(seed))
		at := rng.Intn(63)
		h := newHistory(63, map[int]float64{at: math.Log(1.30)}, nil, nil)
		m := &lockedSim{simMeasurer: newSim(h, seed)}
		m.outlier = 0.05
		waves := 0
		r, err := Run(context.Background(), Options{Measurer: m, Metric: "text_ms", Parallel: 3, MaxCulprits: 1,
			Log: func(l string) {
				if strings.Contains(l, "commits at once") {
					waves++
				}
			}}, h.good, h.path)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if culpritPos(r, h) != at || !r.Found() {
			wrong++
			t.Logf("seed %d: culprit %d, want %d", seed, culpritPos(r, h), at)
		}
		if m.most.Load() < 2 {
			t.Fatalf("seed %d: the candidates were measured one at a time", seed)
		}
		if m.repeated != 0 || r.Runs != m.taken {
			t.Fatalf("seed %d: %d runs repeated; result says %d runs, measurer took %d", seed, m.repeated, r.Runs, m.taken)
		}
		seq, err := bisectSim(t, h, newSim(h, seed), Options{MaxCulprits: 1})
		if err != nil {
			t.Fatal(err)
		}
		parSteps += waves
		seqSteps += len(seq.Steps)
		parRuns += r.Runs
		seqRuns += seq.Runs
	}
	if wrong > 2 {
		t.Errorf("%d of %d parallel bisections named the wrong culprit", wrong, cases)
	}
	if parSteps >= seqSteps {
		t.Errorf("parallel search took %d waves of measurements over %d histories, the sequential one %d steps: no fewer", parSteps, cases, seqSteps)
	}
	t.Logf("%d histories: %d parallel waves (3 candidates each), %d sequential steps; runs %d against %d",
		cases, parSteps, seqSteps, parRuns, seqRuns)
}
