package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// LayoutComparison is the effect of a code change estimated over several
// code/data layouts, the layouts taken as a random factor.
type LayoutComparison struct {
	Layouts int // layouts with runs of both commits
	// Change is the code effect in percent, 100*(exp(mean d)-1) where d are
	// the per-layout differences of mean log values, and [Lo, Hi] its
	// t-interval at 1-alpha with Layouts-1 degrees of freedom; P is the
	// two-sided paired t-test of mean d = 0.
	Change, Lo, Hi, P float64
	Significant       bool // P < alpha
	// SensitivityBase and SensitivityChanged are the between-layout spread
	// of each commit: 100*stddev (n-1) of its per-layout mean log values,
	// about the percent spread that layout alone causes.
	SensitivityBase, SensitivityChanged float64
	// WithinCV is the run-to-run noise inside a layout: 100*the pooled
	// within-layout stddev of log values, both commits.
	WithinCV float64
	// LayoutF and LayoutP are the random-effects ANOVA test that the
	// layouts spread more than the runs inside them ([LayoutANOVA] over
	// both commits); LayoutSensitive is LayoutP < alpha, the evidence that
	// a difference seen under one layout can be an alignment artifact.
	LayoutF, LayoutP float64
	LayoutSensitive  bool
	Warnings         []error
}

// CompareLayouts estimates the effect of a code change when both commits
// were built and run under several layouts: base[k] and changed[k] hold the
// runs of each commit built with layout k (link order, function alignment,
// padding, environment size; see Kalibera & Jones, "Rigorous Benchmarking in
// Reasonable Time", and Mytkowicz et al., ASPLOS 2009).
//
// Layouts are the experimental units and runs are nested in them. For each
// layout k it takes the mean of the log run values of each commit, and
// their difference d[k] = mean log changed[k] - mean log base[k]; layout k
// pairs the two commits. The code effect is the mean of d with a Student t
// interval on Layouts-1 degrees of freedom, so that the layout-by-code
// interaction (a change that helps under one alignment and hurts under
// another) counts as noise, not as effect. With values <= 0, raw values are
// used and percents are of |mean(base)|. Layouts missing on either side, or
// empty, are skipped with a warning; at least 2 layouts are needed for P.
func CompareLayouts(base, changed [][]float64, alpha float64) LayoutComparison {
	alpha, warns := checkAlpha(alpha)
	lc := LayoutComparison{P: 1, LayoutP: 1, Warnings: warns}
	if len(base) != len(changed) {
		lc.Warnings = append(lc.Warnings, fmt.Errorf("layouts: base has %d, changed has %d; using the first %d", len(base), len(changed), min(len(base), len(changed))))
	}
	var bs, cs [][]float64
	for k := range min(len(base), len(changed)) {
		b, wb := finite(base[k], fmt.Sprintf("base layout %d", k))
		c, wc := finite(changed[k], fmt.Sprintf("changed layout %d", k))
		lc.Warnings = append(append(lc.Warnings, wb...), wc...)
		if len(b) == 0 || len(c) == 0 {
			lc.Warnings = append(lc.Warnings, fmt.Errorf("layout %d: no runs of %s; skipped", k, map[bool]string{true: "base", false: "changed"}[len(b) == 0]))
			continue
		}
		bs, cs = append(bs, b), append(cs, c)
	}
	L := len(bs)
	lc.Layouts = L
	if L == 0 {
		lc.Warnings = append(lc.Warnings, fmt.Errorf("no layout has runs of both commits"))
		return lc
	}
	tr := newScale(append(append([][]float64(nil), bs...), cs...), bs)
	mb, mc := tr.means(bs), tr.means(cs)
	d := make([]float64, L)
	for k := range d {
		d[k] = mc[k] - mb[k]
	}
	mean := stat.Mean(d, nil)
	lc.Change = tr.pct(mean)
	lc.Lo, lc.Hi = lc.Change, lc.Change
	if L < 2 {
		lc.Warnings = append(lc.Warnings, fmt.Errorf("need >= 2 layouts to test the code effect, have %d", L))
	} else {
		sd := stat.StdDev(d, nil)
		se := sd / math.Sqrt(float64(L))
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(L - 1)}
		switch {
		case se > 0:
			lc.P = 2 * t.Survival(math.Abs(mean)/se)
			h := t.Quantile(1-alpha/2) * se
			lc.Lo, lc.Hi = tr.pct(mean-h), tr.pct(mean+h)
		case mean != 0:
			lc.P = 0
			lc.Warnings = append(lc.Warnings, fmt.Errorf("all %d layouts show the same difference: no layout noise to test against", L))
		}
		lc.SensitivityBase = 100 * stat.StdDev(mb, nil) * tr.unit
		lc.SensitivityChanged = 100 * stat.StdDev(mc, nil) * tr.unit
	}
	lc.Significant = lc.P < alpha
	e := layoutANOVA(alpha, tr, bs, cs)
	lc.WithinCV = e.WithinCV
	lc.LayoutF, lc.LayoutP, lc.LayoutSensitive = e.F, e.P, e.Sensitive
	lc.Warnings = append(lc.Warnings, e.Warnings...)
	if tr.raw {
		lc.Warnings = append(lc.Warnings, fmt.Errorf("values <= 0: layouts compared on raw values, in percent of the base mean"))
	}
	if tr.zeroBase {
		lc.Warnings = append(lc.Warnings, fmt.Errorf("base mean is 0: changes are raw differences times 100, not percents"))
	}
	return lc
}

// LayoutEffect is a one-way random-effects analysis of variance of runs
// grouped by layout, each commit with its own mean.
type LayoutEffect struct {
	// F = MS(between layouts)/MS(within layouts), with DF1 and DF2 degrees
	// of freedom, and P its upper tail: the test that the layout variance
	// component is 0. Sensitive is P < alpha. F is math.MaxFloat64 (P 0)
	// when layouts differ but runs inside each layout do not vary at all.
	F, P      float64
	DF1, DF2  int
	Sensitive bool
	// BetweenSD is the layout variance component sqrt(max(0, (MSB-MSW)/n0))
	// and WithinCV the run noise sqrt(MSW), both 100*log-scale stddev, about
	// percent.
	BetweenSD, WithinCV float64
	Warnings            []error
}

// LayoutANOVA tests whether layouts matter: commits[c][k] are the runs of
// commit c built under layout k. Each commit keeps its own grand mean (the
// code effect is fixed), layouts within a commit are random, runs within a
// layout are replicates; F has sum(L_c - 1) and N - sum(L_c) degrees of
// freedom, an exact test under normal log values whether or not the layouts
// have equal numbers of runs. Values are logs when all are positive.
// Empty layouts and non-finite values are dropped.
func LayoutANOVA(alpha float64, commits ...[][]float64) LayoutEffect {
	alpha, warns := checkAlpha(alpha)
	var groups [][][]float64
	var all, first [][]float64
	for ci, runs := range commits {
		var g [][]float64
		for k, r := range runs {
			v, w := finite(r, fmt.Sprintf("commit %d layout %d", ci, k))
			warns = append(warns, w...)
			if len(v) > 0 {
				g = append(g, v)
			}
		}
		groups = append(groups, g)
		all = append(all, g...)
		if first == nil {
			first = g
		}
	}
	e := layoutANOVA(alpha, newScale(all, first), groups...)
	e.Warnings = append(warns, e.Warnings...)
	return e
}

func layoutANOVA(alpha float64, tr scale, commits ...[][]float64) LayoutEffect {
	e := LayoutEffect{P: 1}
	var ssb, ssw, sumN, sumN2w float64
	for _, runs := range commits {
		if len(runs) == 0 {
			continue
		}
		var tot, nc float64
		ms := tr.means(runs)
		for k, r := range runs {
			tot += ms[k] * float64(len(r))
			nc += float64(len(r))
		}
		grand := tot / nc
		var sumSq float64
		for k, r := range runs {
			n := float64(len(r))
			ssb += n * (ms[k] - grand) * (ms[k] - grand)
			for _, x := range r {
				dx := tr.f(x) - ms[k]
				ssw += dx * dx
			}
			sumSq += n * n
		}
		e.DF1 += len(runs) - 1
		for _, r := range runs {
			e.DF2 += len(r) - 1
		}
		sumN += nc
		sumN2w += nc - sumSq/nc
	}
	if e.DF2 > 0 {
		e.WithinCV = 100 * math.Sqrt(ssw/float64(e.DF2)) * tr.unit
	}
	switch {
	case e.DF1 == 0:
		e.Warnings = append(e.Warnings, fmt.Errorf("layout test: need >= 2 layouts"))
		return e
	case e.DF2 == 0:
		e.Warnings = append(e.Warnings, fmt.Errorf("layout test: need >= 2 runs in some layout to measure run noise"))
		return e
	}
	msb, msw := ssb/float64(e.DF1), ssw/float64(e.DF2)
	if msw == 0 {
		if msb > 0 {
			e.F, e.P = math.MaxFloat64, 0
		}
	} else {
		e.F = msb / msw
		d1, d2 := float64(e.DF1), float64(e.DF2)
		// Upper tail of F(d1, d2) without the cancellation of 1-CDF.
		e.P = mathext.RegIncBeta(d2/2, d1/2, d2/(d2+d1*e.F))
	}
	e.Sensitive = e.P < alpha
	if n0 := sumN2w / float64(e.DF1); n0 > 0 {
		e.BetweenSD = 100 * math.Sqrt(math.Max(0, (msb-msw)/n0)) * tr.unit
	}
	return e
}

// scale maps run values to the scale of the layout analysis: log values
// when all are positive, else raw values with percents taken of |mean|
// of the reference (base) runs.
type scale struct {
	raw      bool
	zeroBase bool    // raw, and the reference mean is 0: percents are raw*100
	unit     float64 // multiplies a scale difference into a fraction
}

func newScale(all, ref [][]float64) scale {
	if allPositive(all...) {
		return scale{unit: 1}
	}
	var s, n float64
	for _, r := range ref {
		for _, x := range r {
			s += x
			n++
		}
	}
	m := math.Abs(s / n)
	if m == 0 || n == 0 {
		return scale{raw: true, zeroBase: true, unit: 1}
	}
	return scale{raw: true, unit: 1 / m}
}

func (s scale) f(x float64) float64 {
	if s.raw {
		return x
	}
	return math.Log(x)
}

// means returns the mean of each layout's runs on the scale.
func (s scale) means(runs [][]float64) []float64 {
	m := make([]float64, len(runs))
	for k, r := range runs {
		t := 0.0
		for _, x := range r {
			t += s.f(x)
		}
		m[k] = t / float64(len(r))
	}
	return m
}

// pct turns a difference on the scale into a percent change.
func (s scale) pct(d float64) float64 {
	if s.raw {
		return 100 * d * s.unit
	}
	return 100 * math.Expm1(d)
}
