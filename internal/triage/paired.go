// Paired experiments: the adaptive schedule of looks and the outcome of
// each.

package triage

import (
	"context"
	"fmt"
	"math"

	"github.com/perfbot/perfbot/internal/stats"
)

// pairedOutcome is a paired experiment's decision.
type pairedOutcome struct {
	exp *Experiment
	d   stats.DecisionResult
	// informative is false when the experiment could not show anything
	// (the knob changed nothing in the build).
	informative bool
}

func (p *pairedOutcome) same() bool { return p != nil && p.informative && p.d.Decision == stats.Same }

func (p *pairedOutcome) different() bool {
	return p != nil && p.informative && p.d.Decision == stats.Different
}

// sign is the direction of a paired outcome's estimate: -1, 0 or 1.
func (p *pairedOutcome) sign() int { return signOf(p.d.Comparison.Change) }

func signOf(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// schedule returns the looks of the paired experiments: 10, 20, 40, ...
// and MaxRuns last.
func (e *engine) schedule() []int {
	return e.decideOptions().Schedule()
}

func (e *engine) decideOptions() stats.DecideOptions {
	return stats.DecideOptions{Alpha: e.opt.Alpha, MinEffect: e.opt.MinEffect / 100, StartN: startRuns, MaxN: e.opt.MaxRuns}
}

// paired runs an adaptive paired experiment: every look measures all
// targets to the next point of the schedule, and stats.Decide compares
// ts[main] with ts[0]; it stops when the answer is known, or at MaxRuns.
// With once, it looks only once. Either way it looks again while the
// failed runs hint at a difference they do not yet show (failsUnsettled).
// When most runs of a build fail, the experiment is kept with outcome
// "failed" and an *errFailedRuns returned.
func (e *engine) paired(ctx context.Context, name ExperimentName, title string, ts []target, labels []string, main int, once bool) (*pairedOutcome, error) {
	out := &pairedOutcome{informative: true}
	var vals []runVals
	var failed []runFails
	looks, runs := 0, 0
	stop := ""
	for _, n := range e.schedule() {
		var err error
		if vals, failed, err = e.measure(ctx, ts, n, true); err != nil {
			return nil, err
		}
		looks, runs = looks+1, n
		if stop = mostFailed(name, labels, vals, failed); stop != "" {
			e.logf("%s: %d runs each: %s", name, n, stop)
			break
		}
		a, b := pairs(vals[0], vals[main])
		out.d = stats.Decide(a, b, true, e.decideOptions())
		e.logf("%s: %d runs each: %s (%s)", name, n, out.d.Decision, out.d.Reason)
		if err := e.save(ctx, fmt.Sprintf("%s, %d runs", name, n), nil); err != nil {
			return nil, err
		}
		if n == e.opt.MaxRuns {
			break
		}
		if (once || out.d.Decision != stats.Unknown) && !failsUnsettled(len(failed[0]), len(failed[0])+len(vals[0]), len(failed[main]), len(failed[main])+len(vals[main])) {
			break
		}
	}
	c := out.d.Comparison
	exp := &Experiment{Name: name, Title: title, Runs: runs, Outcome: Outcome(out.d.Decision.String()),
		Change: c.Change, Lo: c.Lo, Hi: c.Hi, P: c.P, Confidence: c.Confidence, Looks: looks, Reason: out.d.Reason}
	exp.Columns, exp.Table = e.columns(ts, labels, vals, failed)
	out.exp = exp
	if stop != "" {
		exp.Outcome, exp.Reason = OutcomeFailed, stop
		exp.Change, exp.Lo, exp.Hi, exp.P = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		e.exps = append(e.exps, exp)
		return nil, &errFailedRuns{stop}
	}
	e.exps = append(e.exps, exp)
	return out, nil
}
