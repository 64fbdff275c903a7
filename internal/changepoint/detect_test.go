package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// levels returns n log levels: 0, plus change k at index at[k] (log1p of
// the relative changes), plus a drift per point, plus normal noise of sd.
func levels(n int, at []int, change []float64, drift, sd float64, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 99))
	mu := make([]float64, n)
	level := 0.0
	for i := range mu {
		if k := slices.Index(at, i); k >= 0 {
			level += math.Log1p(change[k])
		}
		mu[i] = level + drift*float64(i) + sd*r.NormFloat64()
	}
	return mu
}

func valuesOf(logs []float64) Series {
	pts := make([]Point, len(logs))
	for i, l := range logs {
		pts[i].Value = math.Exp(l)
	}
	s, err := FromValues(pts, 0)
	if err != nil {
		panic(err)
	}
	return s
}

// chainOf returns the chain of the steps between the given levels, each
// step with the interval ±ci (log units) at 95 %, or none where ci is 0.
func chainOf(logs []float64, ci func(i int) float64) Series {
	steps := make([]Point, len(logs)-1)
	for i := range steps {
		d := logs[i+1] - logs[i]
		steps[i].Value = math.Exp(d)
		if w := ci(i + 1); w > 0 {
			steps[i].Lo, steps[i].Hi = math.Exp(d-w), math.Exp(d+w)
		}
	}
	s, err := FromSteps(1, steps, 0.95)
	if err != nil {
		panic(err)
	}
	return s
}

func noCI(int) float64 { return 0 }

func TestDetect(t *testing.T) {
	// Flat for 100 points, a drift of +10 % over 200, flat for 100.
	drift := levels(400, nil, nil, 0, 0.01, 3)
	for i := range drift {
		drift[i] += math.Log(1.1) * math.Min(1, math.Max(0, float64(i-100)/200))
	}
	spike := levels(120, nil, nil, 0, 0.01, 3)
	spike[50] += math.Log(1.5)
	wideAt := func(i int) float64 {
		if i == 70 {
			return 0.5
		}
		return 0.02
	}
	// A chain whose step 70 is +15 %, measured in a disturbed session.
	disturbed := levels(140, []int{70}, []float64{0.15}, 0, 0, 4)
	for i, l := range levels(140, nil, nil, 0, 0.01, 5) {
		disturbed[i] += l
	}
	for _, tc := range []struct {
		desc string
		s    Series
		opt  Options
		want []int     // indices
		chg  []float64 // changes, ±0.03
	}{
		{desc: "flat, 1 % noise", s: valuesOf(levels(200, nil, nil, 0, 0.01, 1))},
		{desc: "+10 % step", s: valuesOf(levels(120, []int{60}, []float64{0.10}, 0, 0.01, 2)), want: []int{60}, chg: []float64{0.10}},
		{desc: "down 20 % and back up", s: valuesOf(levels(140, []int{30, 80}, []float64{-0.2, 0.25}, 0, 0.01, 2)), want: []int{30, 80}, chg: []float64{-0.2, 0.25}},
		{desc: "a single spike of +50 % is no change", s: valuesOf(spike)},
		{desc: "10 % drift over 200 points is no change", s: valuesOf(drift)},
		{desc: "the same drift with KeepDrifts", s: valuesOf(drift), opt: Options{KeepDrifts: true}, want: []int{-1}},
		{desc: "step 3 points from the start: too few points before", s: valuesOf(levels(100, []int{3}, []float64{0.3}, 0, 0.01, 6))},
		{desc: "step 3 points from the end: Head's", s: valuesOf(levels(100, []int{97}, []float64{0.3}, 0, 0.01, 6))},
		{desc: "0.5 % step below MinMagnitude", s: valuesOf(levels(100, []int{50}, []float64{0.005}, 0, 0.0005, 7))},
		{desc: "0.5 % step with MinMagnitude 0", s: valuesOf(levels(100, []int{50}, []float64{0.005}, 0, 0.0005, 7)), opt: Options{MinMagnitude: -1}, want: []int{50}, chg: []float64{0.005}},
		{desc: "empty", s: valuesOf(nil)},
		{desc: "built by hand, without SE and weights", s: Series{Log: levels(120, []int{60}, []float64{0.10}, 0, 0.01, 2)}, want: []int{60}, chg: []float64{0.10}},
		{desc: "chain built by hand", s: Series{Log: levels(200, []int{60}, []float64{0.10}, 0, 0.01, 8), Chained: true}, want: []int{60}, chg: []float64{0.10}},
		{desc: "one point", s: valuesOf([]float64{0})},
		{desc: "chain, flat", s: chainOf(levels(200, nil, nil, 0, 0.01, 8), noCI)},
		{desc: "chain, +10 % step", s: chainOf(levels(200, []int{60}, []float64{0.10}, 0, 0.01, 8), noCI), want: []int{60}, chg: []float64{0.10}},
		{desc: "chain, steps right after each other", s: chainOf(levels(200, []int{60, 61}, []float64{0.10, -0.10}, 0, 0.01, 8), noCI), want: []int{60, 61}, chg: []float64{0.10, -0.10}},
		{desc: "chain, a fresh step at the head", s: chainOf(levels(100, []int{99}, []float64{-0.10}, 0, 0.01, 8), noCI), want: []int{99}, chg: []float64{-0.10}},
		{desc: "chain, drift", s: chainOf(levels(300, nil, nil, math.Log(1.1)/200, 0.01, 9), noCI)},
		{desc: "chain, +15 % in a session with a wide interval", s: chainOf(disturbed, wideAt)},
		{desc: "chain, the same with a narrow interval", s: chainOf(disturbed, func(int) float64 { return 0.02 }), want: []int{70}, chg: []float64{0.15}},
		{desc: "chain of two points", s: chainOf([]float64{0, 1}, noCI)},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got := Detect(tc.s, tc.opt)
			if len(tc.want) == 1 && tc.want[0] == -1 {
				if len(got) == 0 {
					t.Errorf("no change point, want some")
				}
				return
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want indices %v", got, tc.want)
			}
			for k, cp := range got {
				if cp.Index != tc.want[k] || math.Abs(cp.Change-tc.chg[k]) > 0.03 || cp.P > DefaultMaxPValue {
					t.Errorf("change point %d: %+v, want index %d change %v", k, cp, tc.want[k], tc.chg[k])
				}
				if (cp.Change > 0) != (cp.Direction == Up) {
					t.Errorf("change point %d: change %v, direction %v", k, cp.Change, cp.Direction)
				}
			}
		})
	}
}

func TestDetectSummaries(t *testing.T) {
	s := valuesOf(levels(160, []int{60}, []float64{0.10}, 0, 0.01, 2))
	cps := Detect(s, Options{})
	if len(cps) != 1 {
		t.Fatalf("got %+v", cps)
	}
	cp := cps[0]
	// Window 50 each side.
	if cp.Before.N != 50 || cp.After.N != 50 {
		t.Errorf("sizes %d, %d, want 50, 50", cp.Before.N, cp.After.N)
	}
	if math.Abs(cp.Before.Median-1) > 0.01 || math.Abs(cp.After.Mean-1.1) > 0.01 || math.Abs(cp.After.Median-1.1) > 0.01 {
		t.Errorf("before %+v after %+v", cp.Before, cp.After)
	}
	if want := cp.After.Mean/cp.Before.Mean - 1; math.Abs(cp.Change-want) > 1e-12 {
		t.Errorf("change %v, want the ratio of the means less 1, %v", cp.Change, want)
	}
	// A smaller window caps the summaries.
	if cps = Detect(s, Options{Window: 20}); len(cps) != 1 || cps[0].Before.N != 20 {
		t.Errorf("window 20: %+v", cps)
	}
}

func TestOptionsNormalized(t *testing.T) {
	for _, tc := range []struct{ in, want Options }{
		{Options{}, Options{Window: 50, MaxPValue: 0.001, MinMagnitude: 0.01, MinSize: 5}},
		{Options{Window: 4, MaxPValue: -1, MinMagnitude: -1, MinSize: 3, KeepDrifts: true}, Options{Window: 6, MaxPValue: 0.001, MinMagnitude: 0, MinSize: 3, KeepDrifts: true}},
		{Options{Window: 30, MaxPValue: 0.01, MinMagnitude: 0.05, MinSize: 10}, Options{Window: 30, MaxPValue: 0.01, MinMagnitude: 0.05, MinSize: 10}},
	} {
		if got := tc.in.normalized(); got != tc.want {
			t.Errorf("%+v.normalized() = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestDirectionString(t *testing.T) {
	for d, want := range map[Direction]string{Up: "up", Down: "down", 0: "Direction(0)"} {
		if got := d.String(); got != want {
			t.Errorf("%d: %q, want %q", int(d), got, want)
		}
	}
}
