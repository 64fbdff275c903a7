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
		r, err := search(context.Background(), options{Measurer: m, Metric: "text_ms", Parallel: 3, MaxCulprits: 1,
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
		seq, err := bisectSim(t, h, newSim(h, seed), options{MaxCulprits: 1})
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

// pinSim is a lockedSim that keeps calls on machines (PinningMeasurer):
// it records the keys it is given.
type pinSim struct {
	*lockedSim
	kmu  sync.Mutex
	keys map[string]int
}

func (p *pinSim) MeasureOn(ctx context.Context, key string, reqs []Request) (*Batch, error) {
	p.kmu.Lock()
	p.keys[key]++
	p.kmu.Unlock()
	return p.Measure(ctx, reqs)
}

// TestParallelSlotKeys: a slot keeps its pin (its machine) from wave to
// wave, also when fewer candidates than K remain: at most K keys.
func TestParallelSlotKeys(t *testing.T) {
	h := newHistory(40, map[int]float64{17: math.Log(1.30)}, nil, nil)
	p := &pinSim{lockedSim: &lockedSim{simMeasurer: newSim(h, 1)}, keys: map[string]int{}}
	if _, err := search(context.Background(), options{Measurer: p, Metric: "text_ms", Parallel: 3, MaxCulprits: 1}, h.good, h.path); err != nil {
		t.Fatal(err)
	}
	if len(p.keys) == 0 || len(p.keys) > 3 {
		t.Errorf("the looks were pinned by %d keys, want 1 to 3: %v", len(p.keys), p.keys)
	}
}

// TestLatestMachine: a look's candidate runs are those of the machine
// that took the latest ones; the runs its dead machine took before are
// not mixed in.
func TestLatestMachine(t *testing.T) {
	s := Samples{Layouts: [][]Value{{{Index: 1, Machine: "a", OK: true}, {Index: 2, Machine: "a", OK: true}, {Index: 3, Machine: "b", OK: true}, {Index: 4, Machine: "b", OK: true}, {Index: 5, Machine: "b", OK: true}}}}
	if m := s.latestMachine(); m != "b" {
		t.Fatalf("latest machine %q, want b", m)
	}
	if n := s.of("b").runs(); n != 3 {
		t.Errorf("%d runs of b, want 3", n)
	}
}

// TestParallelSplits: a k-ary look at a commit between two changes (it
// differs from both ends toward each other) splits the range into two, as
// a sequential step does, and both culprits are found.
func TestParallelSplits(t *testing.T) {
	said, split := 0, 0
	for seed := range int64(8) {
		h := newHistory(40, map[int]float64{12: math.Log(1.25), 28: math.Log(1.25)}, nil, nil)
		m := &lockedSim{simMeasurer: newSim(h, seed)}
		r, err := search(context.Background(), options{Measurer: m, Metric: "text_ms", Parallel: 3}, h.good, h.path)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, s := range r.Steps {
			if strings.Contains(s.Reason, "split here") {
				said++
			}
		}
		for _, rg := range r.Ranges {
			if rg.Split {
				split++
			}
		}
	}
	if said == 0 {
		t.Fatal("no look found a commit between the two changes")
	}
	if split == 0 {
		t.Errorf("%d looks said the range is split there, and no range was split", said)
	}
}
