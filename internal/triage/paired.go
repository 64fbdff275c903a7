// Paired experiments: their looks (a group-sequential schedule) and the
// decision of each.

package triage

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/perfbot/perfbot/internal/stats"
)

// pairedOutcome is a paired experiment (plain, forced alignment, restore):
// its builds, the looks taken so far and the decision of the latest.
type pairedOutcome struct {
	name   ExperimentName
	title  string
	ts     []target // the builds, the base first
	labels []string
	main   int // ts[main] is compared with ts[0]
	// measured are the indices of ts that later looks measure (nil: all).
	// The restore experiment that shares its first look with the plain
	// comparison leaves the changed commit's column to it.
	measured []int
	looks    int // looks taken
	runs     int // rounds at the latest look
	vals     []runVals
	failed   []runFails

	exp *Experiment
	d   stats.DecisionResult
	// informative is false when the experiment could not show anything
	// (the knob changed nothing in the build).
	informative bool
}

func newPaired(name ExperimentName, title string, ts []target, labels []string, main int) *pairedOutcome {
	return &pairedOutcome{name: name, title: title, ts: ts, labels: labels, main: main, informative: true,
		vals: make([]runVals, len(ts)), failed: make([]runFails, len(ts))}
}

func (p *pairedOutcome) same() bool { return p != nil && p.informative && p.d.Decision == stats.Same }

func (p *pairedOutcome) different() bool {
	return p != nil && p.informative && p.d.Decision == stats.Different
}

// unsettled reports whether the experiment ran and has no answer yet.
func (p *pairedOutcome) unsettled() bool {
	return p != nil && p.informative && p.d.Decision == stats.Unknown
}

// sign is the direction of a paired outcome's estimate: -1, 0 or 1.
func (p *pairedOutcome) sign() int { return signOf(p.d.Comparison.Change) }

// logChange is the estimate on the log scale.
func (p *pairedOutcome) logChange() float64 { return math.Log1p(p.d.Comparison.Change / 100) }

func signOf(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// toMeasure lists the indices of ts a look measures.
func (p *pairedOutcome) toMeasure() []int {
	if p.looks > 0 && p.measured != nil {
		return p.measured
	}
	all := make([]int, len(p.ts))
	for i := range all {
		all[i] = i
	}
	return all
}

// schedule returns the looks of the paired experiments, in runs per
// build: 10, 20, 40 (or the finer plan's), and MaxRuns last.
func (e *engine) schedule() []int { return e.plan().Looks }

// canLook reports whether p may take another look: it has not reached
// MaxRuns, and its answer is unknown or its failed runs hint at a
// difference they do not show yet (failsUnsettled).
func (e *engine) canLook(p *pairedOutcome) bool {
	if p == nil || !p.informative || p.looks >= len(e.schedule()) {
		return false
	}
	if p.looks == 0 || p.d.Decision == stats.Unknown {
		return true
	}
	return failsUnsettled(len(p.failed[0]), len(p.failed[0])+len(p.vals[0]), len(p.failed[p.main]), len(p.failed[p.main])+len(p.vals[p.main]))
}

// failsPending returns, while the two commits' failed runs over the
// whole triage hint at different failure rates without showing them
// (failsUnsettled), a paired experiment with failed runs that can take
// another look; else nil.
func (e *engine) failsPending() *pairedOutcome {
	f, n := e.failCounts()
	if !failsUnsettled(f[0], n[0], f[1], n[1]) {
		return nil
	}
	for _, x := range []*pairedOutcome{e.plain, e.forcedOut, e.restoreOut} {
		if x != nil && x.informative && x.looks > 0 && x.looks < len(e.schedule()) && len(x.failed[0])+len(x.failed[x.main]) > 0 {
			return x
		}
	}
	return nil
}

// look takes the next look of each experiment (all at the same point of
// the schedule): it measures their builds together, in whole rounds, to
// the next point of the schedule, and decides each at that look's
// nominal level; it looks again while an answer's failed runs leave the
// failure rates unsettled. When most runs of a build fail, the experiment
// is kept with outcome "failed" and an *errFailedRuns returned.
func (e *engine) look(ctx context.Context, xs ...*pairedOutcome) error {
	k := xs[0].looks
	n := e.schedule()[k]
	var ts []target
	at := map[string]int{}
	for _, x := range xs {
		for _, i := range x.toMeasure() {
			if _, ok := at[x.ts[i].key()]; !ok {
				at[x.ts[i].key()] = len(ts)
				ts = append(ts, x.ts[i])
			}
		}
	}
	vals, failed, err := e.measure(ctx, ts, n, true)
	if err != nil {
		return err
	}
	for _, x := range xs {
		for i, t := range x.ts {
			if j, ok := at[t.key()]; ok {
				x.vals[i], x.failed[i] = vals[j], failed[j]
			} else if l, ok := e.latest[t.key()]; ok {
				x.vals[i], x.failed[i] = l.vals, l.failed
			}
		}
		x.looks, x.runs = k+1, n
		if stop := mostFailed(x.name, x.labels, x.vals, x.failed); stop != "" {
			e.logf("%s: %d runs each: %s", x.name, n, stop)
			e.record(x)
			x.exp.Outcome, x.exp.Reason = OutcomeFailed, stop
			x.exp.Change, x.exp.Lo, x.exp.Hi, x.exp.P = math.NaN(), math.NaN(), math.NaN(), math.NaN()
			return &errFailedRuns{stop}
		}
		a, b := pairs(x.vals[0], x.vals[x.main])
		x.d = stats.Decide(a, b, true, e.decideOptionsAt(k))
		e.sameProgram(x)
		e.logf("%s: %d runs each: %s (%s)", x.name, n, x.d.Decision, x.d.Reason)
		e.record(x)
		if err := e.save(ctx, fmt.Sprintf("%s, %d runs", x.name, n), nil); err != nil {
			return err
		}
	}
	// An answer whose failed runs hint at a difference they do not show
	// yet gets another look.
	var again []*pairedOutcome
	for _, x := range xs {
		if x.d.Decision != stats.Unknown && e.canLook(x) {
			again = append(again, x)
		}
	}
	if len(again) > 0 {
		return e.look(ctx, again...)
	}
	return nil
}

// record puts the experiment's latest state in the list of experiments,
// in place of an earlier look's.
func (e *engine) record(x *pairedOutcome) {
	c := x.d.Comparison
	exp := &Experiment{Name: x.name, Title: x.title, Runs: x.runs, Outcome: Outcome(x.d.Decision.String()),
		Change: c.Change, Lo: c.Lo, Hi: c.Hi, P: c.P, Confidence: c.Confidence, Looks: x.looks, Reason: x.d.Reason}
	if !x.informative && x.exp != nil {
		exp.Reason = x.exp.Reason
	}
	exp.Columns, exp.Table = e.columns(x.ts, x.labels, x.vals, x.failed)
	if i := slices.IndexFunc(e.exps, func(y *Experiment) bool { return y.Name == x.name }); i >= 0 {
		e.exps[i] = exp
	} else {
		e.exps = append(e.exps, exp)
	}
	x.exp = exp
}

// uninformative marks an experiment whose knob did not reach the build.
func (e *engine) uninformative(x *pairedOutcome, why string) {
	x.informative = false
	x.exp.Reason = why
	e.res.Notes = append(e.res.Notes, why)
}

// decideOptionsAt are the options of look k (0-based) of a paired
// experiment: its nominal level in the group-sequential plan.
func (e *engine) decideOptionsAt(k int) stats.DecideOptions {
	o := e.decideOptions()
	o.Alpha = e.nominal(k)
	return o
}

func (e *engine) decideOptions() stats.DecideOptions {
	return stats.DecideOptions{Alpha: e.opt.Alpha, MinEffect: e.opt.EffectPct / 100, StartN: startRuns, MaxN: e.opt.MaxRuns}
}
