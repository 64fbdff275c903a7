package history

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestMemoSameHistory builds a synthetic history (a +40 % step at commit
// 25, the machine drifting by up to 30 % between sessions) with and
// without a memo: the same series, the step found in the chained levels
// and not the drift, and a rebuild after a new cycle compares only the
// new commits.
func TestMemoSameHistory(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	level := func(i int) float64 {
		if i >= 25 {
			return 1.4
		}
		return 1
	}
	spec := testutil.HistorySpec{Job: "job", Commits: 40, PerCycle: 8, Rounds: 5, Level: level, Seed: 1}
	hashes := testutil.SyntheticHistory(t, st, spec)
	commits := make([]gitrev.Commit, len(hashes))
	for i, h := range hashes {
		commits[i] = gitrev.Commit{Hash: h}
	}
	plain, err := Build(ctx, st, "job", "", "work_ms", commits, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	var memo Memo
	memoed, err := memo.Build(ctx, st, "job", "", "work_ms", commits, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plain, memoed) {
		t.Fatalf("the memo changes the history:\n%+v\n%+v", plain.Points[:3], memoed.Points[:3])
	}
	if memo.Len() != 40 {
		t.Errorf("memo holds %d comparisons, want one per commit, 40", memo.Len())
	}
	again, err := memo.Build(ctx, st, "job", "", "time.elapsed_time", commits, 0.01)
	if err != nil || len(again.Points) != 40 || memo.Len() != 40 {
		t.Fatalf("another metric of the same commits: %v, %d points, memo %d", err, len(again.Points), memo.Len())
	}
	if len(plain.Points) != 40 {
		t.Fatalf("%d points, want 40", len(plain.Points))
	}
	// The chained levels carry the step and not the sessions' drift.
	for i, p := range plain.Points {
		want := level(i) / level(0)
		if got := p.Level / plain.Points[0].Level; got < want*0.93 || got > want*1.07 {
			t.Errorf("point %d: level %.3f of the first, want about %.2f", i, got, want)
		}
	}
	if s := plain.Points[25]; s.Step < 30 || s.P > 0.1 {
		t.Errorf("the step at 25: %+.1f%%, p=%.3g", s.Step, s.P)
	}

	// A new cycle of 8 commits: only they are compared.
	spec.Commits = 48
	hashes = testutil.SyntheticHistory(t, st, spec)
	for _, h := range hashes[40:] {
		commits = append(commits, gitrev.Commit{Hash: h})
	}
	grown, err := memo.Build(ctx, st, "job", "", "work_ms", commits, 0.01)
	if err != nil || len(grown.Points) != 48 {
		t.Fatalf("after a new cycle: %v, %d points", err, len(grown.Points))
	}
	if memo.Len() != 48 {
		t.Errorf("memo holds %d comparisons after a cycle of 8, want 48", memo.Len())
	}

	// Ratios to an anchor (hashes[7], measured in the first cycle and
	// again as the reference of the second, with commits 0 to 15): the
	// same through the memo, one comparison per point whatever the
	// metric.
	anchor := hashes[7]
	if err := Ratios(ctx, st, grown, anchor, 0.01); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(grown.Points)
	n := memo.Len()
	if err := memo.Ratios(ctx, st, grown, anchor, 0.01); err != nil || !reflect.DeepEqual(grown.Points, want) {
		t.Fatalf("the memo changes the ratios (%v)", err)
	}
	for i, p := range grown.Points {
		if i == 7 {
			if p.Ratio != 1 {
				t.Errorf("the anchor's ratio %.3f", p.Ratio)
			}
			continue
		}
		if measured := i < 16; measured != (p.Ratio > 0) || (measured && (p.Ratio < 0.97 || p.Ratio > 1.03 || !(p.RatioLo < p.Ratio && p.Ratio < p.RatioHi))) {
			t.Errorf("point %d: ratio %.3f [%.3f, %.3f] to the anchor", i, p.Ratio, p.RatioLo, p.RatioHi)
		}
	}
	if memo.Len() != n+47 {
		t.Errorf("the ratios added %d comparisons to the memo, want one per point but the anchor's, 47", memo.Len()-n)
	}
	if err := memo.Ratios(ctx, st, again, anchor, 0.01); err != nil || memo.Len() != n+47 {
		t.Errorf("another metric's ratios: %v, memo grew by %d, want 47 still", err, memo.Len()-n)
	}
	// A store that cannot be read is an error, not an anchor not measured.
	closed, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	if err := Ratios(ctx, closed, grown, anchor, 0.01); err == nil {
		t.Error("ratios read from a closed store: no error")
	}
}
