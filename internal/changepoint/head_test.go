package changepoint

import (
	"math"
	"testing"
)

func TestHead(t *testing.T) {
	flat := levels(60, nil, nil, 0, 0.01, 11)
	up := func(logs []float64, k int, c float64) []float64 {
		out := append([]float64(nil), logs...)
		for i := len(out) - k; i < len(out); i++ {
			out[i] += math.Log1p(c)
		}
		return out
	}
	for _, tc := range []struct {
		desc   string
		s      Series
		k      int
		opt    Options
		want   bool
		change float64 // ±0.03 when want
		index  int
	}{
		{desc: "values, the newest point +10 %", s: valuesOf(up(flat, 1, 0.10)), k: 1, want: true, change: 0.10, index: 59},
		{desc: "values, the newest point as before", s: valuesOf(flat), k: 1, index: 59},
		{desc: "values, the newest two points -10 %", s: valuesOf(up(flat, 2, -0.10)), k: 2, want: true, change: -0.10, index: 58},
		{desc: "values, +10 % under MinMagnitude 20 %", s: valuesOf(up(flat, 1, 0.10)), k: 1, opt: Options{MinMagnitude: 0.2}, index: 59},
		{desc: "values, the baseline is the Window before the head", s: valuesOf(up(levels(200, []int{50}, []float64{0.5}, 0, 0.01, 12), 1, 0.10)), k: 1, want: true, change: 0.10, index: 199},
		{desc: "chain, the newest step +10 %", s: chainOf(up(flat, 1, 0.10), noCI), k: 1, want: true, change: 0.10, index: 59},
		{desc: "chain, the newest step as before", s: chainOf(flat, noCI), k: 1, index: 59},
		{desc: "chain, +15 % over the last three steps (their noise adds up)", s: chainOf(up(flat, 3, 0.15), noCI), k: 3, want: true, change: 0.15, index: 57},
		{desc: "chain, +10 % in a session with a wide interval", s: chainOf(up(flat, 1, 0.10), func(i int) float64 {
			if i == 59 {
				return 0.4
			}
			return 0.02
		}), k: 1, index: 59},
		{desc: "too little history", s: valuesOf(up(flat[:3], 1, 0.5)), k: 1, index: 2},
		{desc: "k = 0", s: valuesOf(flat), k: 0, index: 60},
		{desc: "k = n", s: valuesOf(flat), k: 60, index: 0},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			cp, ok := Head(tc.s, tc.k, tc.opt)
			if ok != tc.want || cp.Index != tc.index {
				t.Fatalf("got %+v, %v; want index %d, %v", cp, ok, tc.index, tc.want)
			}
			if ok && (math.Abs(cp.Change-tc.change) > 0.03 || cp.P > DefaultMaxPValue || (cp.Change > 0) != (cp.Direction == Up)) {
				t.Errorf("got %+v, want change %v", cp, tc.change)
			}
			if !ok && cp.P <= DefaultMaxPValue && math.Abs(cp.Change) >= 0.01 && tc.opt.MinMagnitude == 0 {
				t.Errorf("not significant, but %+v", cp)
			}
		})
	}
}
