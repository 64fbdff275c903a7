package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

func smallTruth(n int) *Truth {
	var cs []string
	for i := range n {
		cs = append(cs, fmt.Sprintf("%040x", i+1))
	}
	return &Truth{Commits: cs, Culprit: n / 2, EffectPct: 10, Base: 1, Noise: 0.02, BrokenEvery: 3, Seed: 1}
}

func newFleet(t *testing.T, workers int, tr *Truth) *Fleet {
	f, err := New(Config{Workers: workers, Build: time.Hour, Run: time.Minute, Truth: tr, Metric: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBuilds: builds spread over the free workers, one key is built once
// (the later call gets it Cached), and a broken commit's build fails as a
// build does.
func TestBuilds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := smallTruth(10)
		f := newFleet(t, 2, tr)
		j := &job.Job{Name: "j"}
		start := time.Now()
		var wg sync.WaitGroup
		res := make([]*build.Result, 5)
		errs := make([]error, 5)
		for i, p := range []int{1, 2, 4, 5, 1} { // 1 twice; 3 is broken
			wg.Go(func() {
				res[i], errs[i] = f.Builder().Build(context.Background(), j, gitrev.Commit{Hash: tr.Commits[p]}, job.Variant{})
			})
		}
		wg.Wait()
		if d := time.Since(start); d != 2*time.Hour {
			t.Errorf("4 builds on 2 workers took %v, want 2h", d)
		}
		cached := 0
		for i, r := range res {
			if errs[i] != nil {
				t.Errorf("build %d: %v", i, errs[i])
			}
			if r.Cached {
				cached++
			}
		}
		if cached != 1 {
			t.Errorf("%d of the two builds of one commit were cached, want 1", cached)
		}
		_, err := f.Builder().Build(context.Background(), j, gitrev.Commit{Hash: tr.Commits[3]}, job.Variant{})
		if !errors.Is(err, build.ErrFailed) {
			t.Errorf("build of the broken commit: %v, want build.ErrFailed", err)
		}
		st, err := f.Close()
		if err != nil || st.Builds != 5 {
			t.Errorf("Close: %d builds, %v; want 5, nil", st.Builds, err)
		}
	})
}

// TestRounds: a measurement's rounds are taken in order on one worker,
// two measurements at once on two workers side by side, a pinned one on
// its worker again, and each record carries the truth's figure.
func TestRounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := smallTruth(10)
		tr.BrokenEvery = 0
		f := newFleet(t, 2, tr)
		ex := f.Executor()
		rounds := func(session string, commits ...int) [][]measure.Task {
			var out [][]measure.Task
			for r := 1; r <= 3; r++ {
				var round []measure.Task
				for _, c := range commits {
					round = append(round, measure.Task{Session: session, Key: store.RunKey{Job: "j", Commit: tr.Commits[c], Index: r}})
				}
				out = append(out, round)
			}
			return out
		}
		start := time.Now()
		machines := make([]map[string]bool, 2)
		var wg sync.WaitGroup
		for s := range 2 {
			machines[s] = map[string]bool{}
			wg.Go(func() {
				next := 0
				err := ex.(measure.RoundExecutor).ExecuteRounds(context.Background(), rounds(fmt.Sprint(s), 2*s, 2*s+1), func(i int, recs []*store.RunRecord) error {
					if i != next {
						t.Errorf("round %d handed over before round %d", i, next)
					}
					next++
					for _, r := range recs {
						machines[s][r.Machine] = true
						if want := tr.Figure(r.Commit, "", r.Index, r.Machine); r.Values[0].Value != want {
							t.Errorf("run %d of %.7s: %v, want the truth's %v", r.Index, r.Commit, r.Values[0].Value, want)
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if d := time.Since(start); d != 6*time.Minute {
			t.Errorf("two measurements of 3 rounds of 2 runs on 2 workers took %v, want 6m", d)
		}
		if len(machines[0]) != 1 || len(machines[1]) != 1 || fmt.Sprint(machines[0]) == fmt.Sprint(machines[1]) {
			t.Errorf("machines of the two measurements: %v and %v; want one each, not the same", machines[0], machines[1])
		}
		st, err := f.Close()
		if err != nil || st.Runs != 12 || st.Rounds != 6 {
			t.Errorf("Close: %d runs in %d rounds, %v; want 12 in 6, nil", st.Runs, st.Rounds, err)
		}
		for i, b := range st.Busy {
			if b != 6*time.Minute {
				t.Errorf("worker %d busy %v, want 6m", i+1, b)
			}
		}
	})
}

// TestTruth: the figures have the planted change and the noise asked for.
func TestTruth(t *testing.T) {
	tr := smallTruth(4)
	var before, after []float64
	for i := range 2000 {
		before = append(before, math.Log(tr.Figure(tr.Commits[tr.Culprit-1], "", i, "m")))
		after = append(after, math.Log(tr.Figure(tr.Commits[tr.Culprit], "", i, "m")))
	}
	mb, sb := meanSD(before)
	ma, _ := meanSD(after)
	if d := 100 * math.Expm1(ma-mb); math.Abs(d-10) > 0.5 {
		t.Errorf("change %.2f%%, want 10%%", d)
	}
	if math.Abs(sb-0.02) > 0.002 {
		t.Errorf("noise %.4f, want 0.02", sb)
	}
	if err := (&Truth{Commits: tr.Commits, Culprit: 4, Base: 1}).Check(); err == nil {
		t.Error("a culprit past the history passed Check")
	}
}

func meanSD(xs []float64) (float64, float64) {
	var s, s2 float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	for _, x := range xs {
		s2 += (x - m) * (x - m)
	}
	return m, math.Sqrt(s2 / float64(len(xs)-1))
}
