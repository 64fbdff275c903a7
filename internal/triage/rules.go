// The decision rules: the verdict the evidence so far supports, and the
// experiment to run next when it supports none.

package triage

import (
	"context"
	"math"

	"github.com/perfbot/perfbot/internal/verdict"
)

// verdict returns the verdict the experiments so far support, or false.
// The rules, first match wins:
//
//  1. the sweep is significant: a real change (its direction);
//  2. an equalising experiment keeps a change (forced alignment, with no
//     moved data object or the data restore keeping it too; or the data
//     restore, with no moved function or forced alignment keeping it too)
//     and the sweep agrees (sweepAgrees): a real change, in that
//     experiment's direction, whatever the plain build shows (a masked
//     change);
//  3. the plain comparison shows a change that forced alignment removes:
//     text alignment; that the restore removes: text or data alignment by
//     the padded symbol's kind;
//  4. no plain change (same, or not shown) and the sweep bounds the change
//     within the effect: no change; no plain change (same, or not shown
//     with an estimate within the effect) and the experiments that
//     equalise what moved show none (equalizedSame): no change.
func (e *engine) verdict() (verdict.Verdict, bool) {
	p, f, r, sw := e.plain, e.forcedOut, e.restoreOut, e.sweep
	sweepOn := sw != nil && !sw.noEffect
	if sweepOn && sw.outcome == OutcomeSignificant && (e.equalized() == nil || signOf(sw.lc.Change) == e.equalized().sign()) {
		e.realBy = nil
		return e.realVerdict(sw.lc.Change), true
	}
	if x := e.equalized(); x != nil && e.sweepAgrees(x) {
		e.realBy = x
		return e.realVerdict(x.d.Comparison.Change), true
	}
	if p.different() {
		if f.same() {
			return verdict.TextAlignment, true
		}
		if r.same() {
			if e.dataRestore() {
				return verdict.DataAlignment, true
			}
			return verdict.TextAlignment, true
		}
	}
	if !p.different() && sweepOn && sw.outcome == OutcomeSame {
		return verdict.NoChange, true
	}
	if !p.different() && e.equalizedSame() && (p.same() || math.Abs(p.d.Comparison.Change) < e.opt.EffectPct) {
		return verdict.NoChange, true
	}
	return "", false
}

// equalizedSame reports whether the experiments that equalise what moved
// show no change: forced alignment (or the restore of the moved
// function), with no moved data object unless the data restore shows none
// too; or the data restore, with no moved function unless forced alignment
// shows none too. The code change is then bounded within the effect
// whatever the plain build shows.
func (e *engine) equalizedSame() bool {
	f, r := e.forcedOut, e.restoreOut
	dataSame := e.dataRestore() && r.same()
	textSame := f.same() || (e.canRestore() && !e.dataRestore() && r.same())
	return (textSame && (!e.insp.dataMoved || dataSame)) || (dataSame && (!e.insp.textMoved || f.same()))
}

// sweepAgrees weighs an equalising experiment's change with the layout
// sweep. Where the build ignores the layout knobs (no sweep can say
// anything) the experiment stands alone. Otherwise the sweep must estimate
// the change in the same direction, closer to the experiment's change
// than to none (on the log scale the likelihood of the sweep's mean under
// that change is at least its likelihood under none), and support that
// direction at a one-sided p below agreeLevel. The sweep averages over
// layouts that move code and data together, so an artifact that the
// experiment failed to equalise averages out there.
func (e *engine) sweepAgrees(x *pairedOutcome) bool {
	sw := e.sweep
	if sw == nil {
		return false
	}
	if sw.noEffect {
		return true
	}
	m, d := math.Log1p(sw.lc.Change/100), x.logChange()
	return signOf(m) == signOf(d) && math.Abs(m) >= math.Abs(d)/2 && sw.lc.P < 2*agreeLevel
}

// agreeLevel is the one-sided level at which the sweep must support the
// direction of an equalising experiment's change (a variable for the
// simulations that compare levels).
var agreeLevel = 0.2

// realVerdict is the real verdict for a change of pct percent.
func (e *engine) realVerdict(pct float64) verdict.Verdict {
	if (pct > 0) == e.lowerIsBetter() {
		return verdict.RealRegression
	}
	return verdict.RealImprovement
}

// step is one more look of one experiment.
type step func(ctx context.Context) error

// next returns the experiment to run next, nil when none can help. The
// order follows the layout diff (plan0), and each experiment gets its
// looks before the next starts:
//
//   - the plain comparison, when a rule waits for it (forced alignment or
//     the restore is the same and the plain change is unknown);
//   - code moved: forced alignment; when it keeps a change, the sweep to
//     weigh it; then the restore (of the moved function), then more
//     layouts;
//   - data moved: the restore (its first look with the plain comparison's);
//     when it keeps a change, the sweep to weigh it, or forced alignment
//     when code moved too; then forced alignment, then more layouts;
//   - nothing moved: the sweep, then forced alignment, then more layouts.
func (e *engine) next() step {
	p, f, r := e.plain, e.forcedOut, e.restoreOut
	if p.unsettled() && e.canLook(p) && (f.same() || r.same() || e.equalized() == nil && e.exhausted()) {
		// A rule waits for it: alignment artifact or no change.
		return func(ctx context.Context) error { return e.look(ctx, p) }
	}
	forced := e.forcedStep()
	restore := e.restoreStep()
	first := e.sweepStep(false)
	var order []step
	switch e.plan0 {
	case planText:
		order = []step{forced, first, restore}
	case planData:
		if r.different() && !e.textRuledOut() {
			order = []step{restore, forced, first}
		} else {
			order = []step{restore, first, forced}
		}
	default:
		order = []step{first, forced, restore}
	}
	for _, s := range append(order, e.sweepStep(true)) {
		if s != nil {
			return s
		}
	}
	return nil
}

// exhausted reports whether no experiment but the plain comparison can
// take another look.
func (e *engine) exhausted() bool {
	return e.forcedStep() == nil && e.restoreStep() == nil && e.sweepStep(false) == nil && e.sweepStep(true) == nil
}

// forcedStep is forced alignment's next look, nil when it has its answer.
func (e *engine) forcedStep() step {
	if f := e.forcedOut; f != nil && !e.canLook(f) {
		return nil
	}
	return e.lookForced
}

// restoreStep is the restore experiment's next look, nil when there is no
// restore or it has its answer.
func (e *engine) restoreStep() step {
	if r := e.restoreOut; !e.canRestore() || (r != nil && !e.canLook(r)) {
		return nil
	}
	return e.lookRestore
}

// sweepStep is the first sweep (grow false) or a larger one, nil when
// none is possible or useful.
func (e *engine) sweepStep(grow bool) step {
	sw := e.sweep
	switch {
	case !grow && sw == nil && !e.sweepTried:
		return func(ctx context.Context) error { return e.runSweep(ctx, e.opt.Layouts) }
	case grow && sw != nil && sw.outcome != OutcomeSame && sw.canGrowTo(e.opt.MaxLayouts) &&
		(sw.outcome != OutcomeSignificant || e.equalized() != nil):
		return func(ctx context.Context) error { return e.runSweep(ctx, 2*sw.layouts) }
	}
	return nil
}
