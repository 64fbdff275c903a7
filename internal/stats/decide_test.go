package stats

import (
	"math"
	"slices"
	"testing"
)

func TestDecisionString(t *testing.T) {
	for d, want := range map[Decision]string{Unknown: "unknown", Same: "same", Different: "different", 7: "Decision(7)"} {
		if got := d.String(); got != want {
			t.Errorf("Decision(%d).String() = %q, want %q", int(d), got, want)
		}
	}
}

func TestDecideSchedule(t *testing.T) {
	if got := (DecideOptions{}).Schedule(); !slices.Equal(got, []int{10, 20, 40, 80, 160}) {
		t.Errorf("default schedule %v", got)
	}
	if got := (DecideOptions{StartN: 10, MaxN: 50}).Schedule(); !slices.Equal(got, []int{10, 20, 40, 50}) {
		t.Errorf("schedule to 50: %v", got)
	}
	if got := (DecideOptions{StartN: 10, MaxN: 5}).Schedule(); !slices.Equal(got, []int{10}) {
		t.Errorf("schedule to 5: %v", got)
	}
}

func TestDecideCases(t *testing.T) {
	// Deterministic data: b = a * factor * tiny jitter.
	a := seq(100, 0.37, 10)
	scaled := func(f float64, n int) []float64 {
		b := make([]float64, n)
		for i := range b {
			b[i] = a[i%len(a)] * f * (1 + 0.001*float64((i*7)%5-2))
		}
		return b
	}
	opt := DecideOptions{}
	// +30 % on every pair: p = 2/1024 < 0.01.
	r := Decide(a, scaled(1.3, 10), true, opt)
	if r.Decision != Different || r.NextN != 0 || r.Looks != 5 || !near(r.FamilyAlpha, 0.05, 1e-12) {
		t.Errorf("+30%% paired: %+v", r)
	}
	// +0.1 % or so: the 98 % interval sits well within ±5 %.
	r = Decide(a, scaled(1.0, 10), true, opt)
	if r.Decision != Same || r.Comparison.Confidence < 0.98 {
		t.Errorf("equal paired: %+v", r)
	}
	// 5 pairs at +30 %: 2^(1-5) > 0.01 cannot be significant, and the
	// interval is not at 98 %: unknown, run 10.
	r = Decide(a[:5], scaled(1.3, 5), true, opt)
	if r.Decision != Unknown || r.NextN != 10 {
		t.Errorf("5 pairs: %+v", r)
	}
	// Unpaired, overlapping samples with a 3 % shift: neither same within
	// ±1 % nor significant: unknown, go to 20, and at MaxN stop.
	b := []float64{103.5, 101.2, 104.9, 102.0, 106.1, 100.4, 103.3, 105.5, 101.8, 104.2}
	r = Decide(a, b, false, DecideOptions{MinEffect: 0.01})
	if r.Decision != Unknown || r.NextN != 20 {
		t.Errorf("unpaired 3%%: %+v", r)
	}
	r = Decide(a, b, false, DecideOptions{MinEffect: 0.01, MaxN: 10})
	if r.Decision != Unknown || r.NextN != 0 {
		t.Errorf("unpaired 3%% at MaxN: %+v", r)
	}
	// Bad options get defaults and warnings.
	r = Decide(a, scaled(1.3, 10), true, DecideOptions{Alpha: 2, MinEffect: math.NaN()})
	if r.Decision != Different || !hasWarning(r.Warnings, "alpha 2") || !hasWarning(r.Warnings, "min effect NaN") {
		t.Errorf("bad options: %+v", r)
	}
	if r := Decide(nil, nil, false, opt); r.Decision != Unknown || r.Reason != "no test could run" {
		t.Errorf("no data: %+v", r)
	}
}
