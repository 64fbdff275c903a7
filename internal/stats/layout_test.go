package stats

import (
	"math"
	"testing"
)

func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestCompareLayoutsHand checks two layouts of three runs against closed
// forms: Student t with 1 degree of freedom is Cauchy (two-sided p =
// 1 - 2/π atan|t|, 97.5 % quantile tan(0.475π)), and F(2, d2) has upper
// tail (1 + 2F/d2)^(-d2/2).
func TestCompareLayoutsHand(t *testing.T) {
	base := [][]float64{{100, 102, 101}, {110, 111, 109}}
	changed := [][]float64{{105, 104, 106}, {112, 113, 114}}
	lc := CompareLayouts(base, changed, 0.05)

	var mb, mc, d [2]float64
	for k := range 2 {
		mb[k], mc[k] = meanOf(logs(base[k])), meanOf(logs(changed[k]))
		d[k] = mc[k] - mb[k]
	}
	mean := (d[0] + d[1]) / 2
	se := math.Abs(d[0]-d[1]) / math.Sqrt2 / math.Sqrt2 // sd of 2 values / sqrt(2)
	tstat := mean / se
	wantP := 1 - 2/math.Pi*math.Atan(math.Abs(tstat))
	h := math.Tan(0.475*math.Pi) * se
	if lc.Layouts != 2 || !near(lc.Change, 100*math.Expm1(mean), 1e-12) || !near(lc.P, wantP, 1e-9) ||
		!near(lc.Lo, 100*math.Expm1(mean-h), 1e-9) || !near(lc.Hi, 100*math.Expm1(mean+h), 1e-9) {
		t.Errorf("CompareLayouts = %+v\nwant change %v p %v interval [%v, %v]", lc, 100*math.Expm1(mean), wantP,
			100*math.Expm1(mean-h), 100*math.Expm1(mean+h))
	}
	if want := 100 * math.Abs(mb[0]-mb[1]) / math.Sqrt2; !near(lc.SensitivityBase, want, 1e-12) {
		t.Errorf("SensitivityBase = %v, want %v", lc.SensitivityBase, want)
	}
	if want := 100 * math.Abs(mc[0]-mc[1]) / math.Sqrt2; !near(lc.SensitivityChanged, want, 1e-12) {
		t.Errorf("SensitivityChanged = %v, want %v", lc.SensitivityChanged, want)
	}

	// ANOVA: each commit around its own grand mean.
	var ssb, ssw float64
	for _, runs := range [][][]float64{base, changed} {
		grand := (meanOf(logs(runs[0])) + meanOf(logs(runs[1]))) / 2 // equal sizes
		for _, r := range runs {
			m := meanOf(logs(r))
			ssb += 3 * (m - grand) * (m - grand)
			for _, x := range logs(r) {
				ssw += (x - m) * (x - m)
			}
		}
	}
	F := (ssb / 2) / (ssw / 8)
	if wantP := math.Pow(1+2*F/8, -4); !near(lc.LayoutF, F, 1e-9) || !near(lc.LayoutP, wantP, 1e-9) || !lc.LayoutSensitive {
		t.Errorf("layout ANOVA F %v p %v sensitive %v, want F %v p %v", lc.LayoutF, lc.LayoutP, lc.LayoutSensitive, F, wantP)
	}
	if want := 100 * math.Sqrt(ssw/8); !near(lc.WithinCV, want, 1e-12) {
		t.Errorf("WithinCV = %v, want %v", lc.WithinCV, want)
	}
	e := LayoutANOVA(0.05, base, changed)
	if !near(e.F, F, 1e-12) || e.DF1 != 2 || e.DF2 != 8 {
		t.Errorf("LayoutANOVA = %+v, want F %v with 2 and 8 df", e, F)
	}
	// Variance component: n0 = 3 runs per layout.
	if want := 100 * math.Sqrt((ssb/2-ssw/8)/3); !near(e.BetweenSD, want, 1e-9) {
		t.Errorf("BetweenSD = %v, want %v", e.BetweenSD, want)
	}
}

func TestCompareLayoutsEdges(t *testing.T) {
	one := CompareLayouts([][]float64{{100, 101}}, [][]float64{{110, 111}}, 0.05)
	if one.Layouts != 1 || one.P != 1 || one.Significant || !hasWarning(one.Warnings, "need >= 2 layouts") {
		t.Errorf("one layout: %+v", one)
	}
	skipped := CompareLayouts([][]float64{{100}, {}, {102}}, [][]float64{{110}, {111}}, 0.05)
	if skipped.Layouts != 1 || !hasWarning(skipped.Warnings, "layout 1: no runs of base") ||
		!hasWarning(skipped.Warnings, "using the first 2") || !hasWarning(skipped.Warnings, "need >= 2 layouts") {
		t.Errorf("skipped layouts: %+v", skipped)
	}
	// One run per layout: the code effect can be tested, layout noise not.
	single := CompareLayouts([][]float64{{100}, {104}, {98}}, [][]float64{{110}, {113}, {109}}, 0.05)
	if single.Layouts != 3 || !single.Significant || single.LayoutSensitive || !hasWarning(single.Warnings, "need >= 2 runs in some layout") {
		t.Errorf("single runs: %+v", single)
	}
	// Raw values when any is <= 0, percent of the base mean (2).
	raw := CompareLayouts([][]float64{{1, 2, 3}, {1, 2, 3}}, [][]float64{{2, 3, 4}, {0, 3, 4}}, 0.05)
	// d = 1 and 1/3: mean 2/3, in percent of 2: 33.3 %.
	if !near(raw.Change, 100*(2.0/3)/2, 1e-12) || !hasWarning(raw.Warnings, "raw values") {
		t.Errorf("raw: %+v", raw)
	}
	if none := CompareLayouts(nil, nil, 0.05); none.Layouts != 0 || none.P != 1 || len(none.Warnings) == 0 {
		t.Errorf("no layouts: %+v", none)
	}
}
