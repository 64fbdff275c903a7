package history

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// sessionRuns stores watch cycles' runs in a real store: cycle takes 6
// whole rounds of the given commits (their true levels) on a machine of
// the given speed, with 1 % noise, and records the new ones as tested.
type sessionRuns struct {
	st    *store.Store
	next  int // the next run number
	rng   *rand.Rand
	count int
}

func (s *sessionRuns) cycle(t *testing.T, speed float64, ref string, levels map[string]float64, tested []string) {
	t.Helper()
	ctx := context.Background()
	s.count++
	session := "session-" + string(rune('a'+s.count))
	var rounds []int
	for range 6 {
		s.next++
		rounds = append(rounds, s.next)
		for commit, level := range levels {
			v := level * speed * math.Exp(0.01*s.rng.NormFloat64())
			r := &store.RunRecord{RunKey: store.RunKey{Job: "job", Commit: commit, Index: s.next}, Status: store.RunOK, Session: session,
				Machine: "m", Values: []metric.Value{{Name: "ms", Unit: "ms", Better: metric.LowerIsBetter, Value: v}}}
			if err := s.st.PutRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range tested {
		if err := s.st.PutTested(ctx, &store.Tested{Job: "job", Commit: c, Branch: "main", Ref: ref, Session: session, Rounds: rounds}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBuildKeepsDriftOut: three cycles on a machine whose speed changes
// 2x between them; the chained levels and the ratios to the anchor follow
// the commits' true levels (a 20 % step at c3 only), while the medians
// carry the machine's speed. A commit whose reference left the branch
// starts a new chain; a point whose session did not measure the anchor has
// no ratio.
func TestBuildKeepsDriftOut(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := &sessionRuns{st: st, rng: rand.New(rand.NewPCG(1, 2))}
	// c0 alone; c1, c2 beside c0 at half the speed; c3 beside c2 and the
	// anchor c0 at full speed again; c4 in a session without the anchor.
	s.cycle(t, 1, "", map[string]float64{"c0": 1}, []string{"c0"})
	s.cycle(t, 2, "c0", map[string]float64{"c0": 1, "c1": 1, "c2": 1}, []string{"c1", "c2"})
	s.cycle(t, 1, "c2", map[string]float64{"c2": 1, "c3": 1.2, "c0": 1}, []string{"c3"})
	s.cycle(t, 1.5, "c3", map[string]float64{"c3": 1.2, "c4": 1.2}, []string{"c4"})
	list := []gitrev.Commit{{Hash: "c0"}, {Hash: "c1"}, {Hash: "c2"}, {Hash: "c3"}, {Hash: "c4"}}
	series, err := Build(ctx, st, "job", "", "ms", list, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if err := Ratios(ctx, st, series, "c0", 0.01); err != nil {
		t.Fatal(err)
	}
	if len(series.Points) != 5 || series.Unit != "ms" || series.Better != metric.LowerIsBetter {
		t.Fatalf("series %+v", series)
	}
	wantLevel := []float64{1, 1, 1, 1.2, 1.2}
	wantMedian := []float64{1, 2, 2, 1.2, 1.8}
	wantRatio := []float64{1, 1, 1, 1.2, 0}
	for i, p := range series.Points {
		if math.Abs(p.Level/wantLevel[i]-1) > 0.03 || math.Abs(p.Median/wantMedian[i]-1) > 0.03 {
			t.Errorf("point %s: level %.3f, median %.3f; want %.3f and %.3f", p.Commit.Hash, p.Level, p.Median, wantLevel[i], wantMedian[i])
		}
		if !(p.MedianLo <= p.Median && p.Median <= p.MedianHi) || p.Runs != 6 {
			t.Errorf("point %s: median %.3f [%.3f, %.3f] of %d runs", p.Commit.Hash, p.Median, p.MedianLo, p.MedianHi, p.Runs)
		}
		if math.Abs(p.Ratio-wantRatio[i]) > 0.03 {
			t.Errorf("point %s: ratio to the anchor %.3f, want %.3f", p.Commit.Hash, p.Ratio, wantRatio[i])
		}
	}
	if p := series.Points[3]; p.Ref != "c2" || p.Step < 17 || p.Step > 23 || !(p.Lo < p.Step && p.Step < p.Hi) || p.P >= 0.01 {
		t.Errorf("c3's step %+.1f%% [%+.1f%%, %+.1f%%] p=%.3g vs %s, want about +20%% vs c2, significant", p.Step, p.Lo, p.Hi, p.P, p.Ref)
	}
	if p := series.Points[2]; p.Ref != "c1" {
		t.Errorf("c2 is measured against %s, want c1 (the point before, in the same rounds)", p.Ref)
	}
	// A force-push drops c2, c3's reference: c3 starts a new chain at its
	// own median.
	series, err = Build(ctx, st, "job", "", "ms", []gitrev.Commit{{Hash: "c0"}, {Hash: "c1"}, {Hash: "c3"}}, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if p := series.Points[2]; !p.NewChain || p.Ref != "" || p.Level != p.Median {
		t.Errorf("after the force-push c3 is %+v, want a new chain", p)
	}
}
