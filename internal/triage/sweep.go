// The layout sweep: both commits under several layouts, and its estimate.

package triage

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/stats"
)

// sweepOutcome is the layout sweep's estimate.
type sweepOutcome struct {
	exp     *Experiment
	lc      stats.LayoutComparison
	eq      stats.LayoutComparison // at 1-2*alpha, for the equivalence test
	outcome Outcome                // significant, same, unclear or uninformative
	layouts int
	// canGrow is false when the preset has no more layouts.
	canGrow bool
	// noEffect is true when the knobs did not change the build.
	noEffect bool
}

// canGrowTo reports whether a larger sweep is possible.
func (s *sweepOutcome) canGrowTo(most int) bool {
	return s.canGrow && 2*s.layouts <= most && !s.noEffect
}

// runSweep measures the first n layouts and estimates the change across
// them.
func (e *engine) runSweep(ctx context.Context, n int) error {
	e.sweepTried = true
	vs := e.lab.layouts(n)
	if len(vs) < 2 {
		e.res.Notes = append(e.res.Notes, "no layout sweep: the preset has no layout knob")
		e.sweep = nil
		return nil
	}
	// Layout 0 is the plain comparison's builds, whose runs it reuses.
	ts := []target{e.plain.ts[0], e.plain.ts[1]}
	for k, v := range vs[1:] {
		ts = append(ts, target{setup: layoutSetup, layout: k + 1, variant: v}, target{changed: true, setup: layoutSetup, layout: k + 1, variant: v})
	}
	r := e.opt.LayoutRuns
	vals, failed, err := e.measure(ctx, ts, r, false)
	if err != nil {
		return err
	}
	bs, cs := make([][]float64, len(vs)), make([][]float64, len(vs))
	exp := &Experiment{Name: SweepExperiment, Runs: r,
		Title: fmt.Sprintf("both commits built under %d layouts that move code, data and stack (the plain build and %s..%s)", len(vs), vs[1].Name, vs[len(vs)-1].Name)}
	for k, v := range vs {
		bs[k], cs[k] = upTo(vals[2*k], r), upTo(vals[2*k+1], r)
		row := LayoutRow{Variant: v.Name, Base: stats.Median(bs[k]), Changed: stats.Median(cs[k]), N: min(len(bs[k]), len(cs[k])),
			BaseValues: bs[k], ChangedValues: cs[k]}
		if row.Variant == "" {
			row.Variant = "(plain)"
		}
		row.Change = pctChange(row.Base, row.Changed)
		exp.Layouts = append(exp.Layouts, row)
	}
	// The sweep's table: the plain layout's columns and each commit's
	// layout medians are in exp.Layouts; the table holds all runs of each
	// commit across layouts (unpaired).
	var sideVals []runVals
	var sideFailed []runFails
	exp.Columns, exp.Table, sideVals, sideFailed = e.sweepColumns(ts, vals, failed, r)
	exp.Looks = 1
	if e.sweep != nil {
		exp.Looks = e.sweep.exp.Looks + 1
	}
	// Replace an earlier sweep: the latest one holds all its layouts.
	e.exps = slices.DeleteFunc(e.exps, func(x *Experiment) bool { return x.Name == SweepExperiment })
	e.exps = append(e.exps, exp)
	sideLabels := []string{"base", "changed"}
	if stop := mostFailed(SweepExperiment, sideLabels, sideVals, sideFailed); stop != "" {
		exp.Outcome, exp.Reason = OutcomeFailed, stop
		exp.Change, exp.Lo, exp.Hi, exp.P = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		e.logf("layout sweep: %d layouts x %d runs: %s", len(vs), r, stop)
		return &errFailedRuns{stop}
	}

	sw := &sweepOutcome{layouts: len(vs), canGrow: len(e.lab.layouts(2*len(vs))) > len(vs)}
	sw.lc = stats.CompareLayouts(bs, cs, e.opt.Alpha)
	sw.eq = stats.CompareLayouts(bs, cs, 2*e.opt.Alpha)
	bound := e.opt.EffectPct
	switch {
	case sw.lc.Layouts >= 2 && sw.lc.Significant:
		sw.outcome = OutcomeSignificant
		exp.Reason = fmt.Sprintf("across %d layouts the change is %+.1f%% (%.0f%% CI %+.1f%% to %+.1f%%), p=%.3g < %.3g", sw.lc.Layouts, sw.lc.Change, 100*(1-e.opt.Alpha), sw.lc.Lo, sw.lc.Hi, sw.lc.P, e.opt.Alpha)
	case sw.eq.Layouts >= 2 && sw.eq.Lo > -bound && sw.eq.Hi < bound:
		sw.outcome = OutcomeSame
		exp.Reason = fmt.Sprintf("across %d layouts the %.0f%% interval of the change [%+.1f%%, %+.1f%%] lies within ±%g%%", sw.eq.Layouts, 100*(1-2*e.opt.Alpha), sw.eq.Lo, sw.eq.Hi, bound)
	default:
		sw.outcome = OutcomeUnclear
		exp.Reason = fmt.Sprintf("across %d layouts the change is %+.1f%% (%.0f%% CI %+.1f%% to %+.1f%%, p=%.3g): neither significant nor within ±%g%%", sw.lc.Layouts, sw.lc.Change, 100*(1-e.opt.Alpha), sw.lc.Lo, sw.lc.Hi, sw.lc.P, bound)
	}
	if e.lab.sameBuild(ts[1], ts[3]) {
		sw.noEffect = true
		sw.outcome = OutcomeUninformative
		note := fmt.Sprintf("the layout builds load the same code and data as the plain build (%s): the build ignores the preset's knobs, so the sweep says nothing", vs[1].Name)
		exp.Reason = note
		e.res.Notes = append(e.res.Notes, note)
	}
	exp.Outcome = sw.outcome
	exp.Change, exp.Lo, exp.Hi, exp.P, exp.Confidence = sw.lc.Change, sw.lc.Lo, sw.lc.Hi, sw.lc.P, 1-e.opt.Alpha
	e.logf("layout sweep: %d layouts x %d runs: %s (%s)", len(vs), r, sw.outcome, exp.Reason)
	sw.exp = exp
	e.sweep = sw
	if sw.noEffect {
		e.res.Robust = nil
		return e.save(ctx, fmt.Sprintf("layout sweep, %d layouts", len(vs)), nil)
	}
	e.res.Robust = &Robust{Layouts: sw.lc.Layouts, Change: sw.lc.Change, Lo: sw.lc.Lo, Hi: sw.lc.Hi, P: sw.lc.P,
		Confidence: 1 - e.opt.Alpha, Significant: sw.lc.Significant,
		SensitivityBase: sw.lc.SensitivityBase, SensitivityChanged: sw.lc.SensitivityChanged,
		LayoutP: sw.lc.LayoutP, WithinCV: sw.lc.WithinCV}
	return e.save(ctx, fmt.Sprintf("layout sweep, %d layouts", len(vs)), nil)
}

// sweepColumns summarises the sweep: each commit's runs (and failed runs)
// over all layouts, which it also returns. The runs keep their pair keys,
// which name their layout, so that the table pairs runs of one layout and
// one round only.
func (e *engine) sweepColumns(ts []target, vals []runVals, failed []runFails, r int) ([]Column, *compare.Table, []runVals, []runFails) {
	all := make([]runVals, 2)
	allFailed := make([]runFails, 2)
	for side := range 2 {
		all[side], allFailed[side] = runVals{}, runFails{}
		for i := side; i < len(ts); i += 2 {
			for k, v := range vals[i] {
				if k.Round <= r {
					all[side][k] = v
				}
			}
			for k, why := range failed[i] {
				if k.Round <= r {
					allFailed[side][k] = why
				}
			}
		}
	}
	layoutsTs := []target{{}, {changed: true}}
	cols, t := e.columns(layoutsTs, []string{"base (all layouts)", "changed (all layouts)"}, all, allFailed)
	for i := range t.Columns {
		t.Columns[i].Variant = "layouts"
	}
	return cols, t, all, allFailed
}
