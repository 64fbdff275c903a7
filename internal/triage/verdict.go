// The end of a triage: the verdict, with its notes, disagreement and budget.

package triage

import (
	"fmt"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
)

// finishReal returns the real-change verdict of a significant sweep.
func (e *engine) finishReal() *Result {
	worse := (e.sweep.lc.Change > 0) == (e.res.Better != metric.HigherIsBetter)
	if worse {
		return e.finish(RealRegression)
	}
	return e.finish(RealImprovement)
}

// finish fills in the verdict, sentence, disagreement and budget. Builds
// that fail at different rates are never "no change".
func (e *engine) finish(v Verdict) *Result {
	r := e.res
	note, gap := e.failNote()
	if note != "" {
		r.Notes = append(r.Notes, note)
	}
	if v == NoChange && gap != "" {
		v = Inconclusive
		e.byIdentity = false
	}
	e.failGap = gap
	r.Verdict = v
	r.Experiments = nil
	for _, x := range e.exps {
		r.Experiments = append(r.Experiments, *x)
	}
	for _, n := range e.used {
		r.Runs += n
	}
	r.FixedRuns = fixedRunsPerBuild * e.fixedBuilds
	r.Disagreement = e.disagreement()
	r.Sentence = e.sentence()
	if v == Inconclusive {
		r.Notes = append(r.Notes, e.settle()...)
	}
	e.logf("verdict: %s: %s", v, r.Sentence)
	return r
}

// disagreement says how the plain comparison and the layout-robust
// estimate differ, or "".
func (e *engine) disagreement() string {
	sw, p := e.sweep, e.plain
	if sw == nil || sw.noEffect || p == nil {
		return ""
	}
	pc := p.d.Comparison
	plainTxt := fmt.Sprintf("the plain comparison shows %+.1f%% (%s)", pc.Change, p.d.Decision)
	robustTxt := fmt.Sprintf("across %d layouts the change is %+.1f%% (CI %+.1f%% to %+.1f%%)", sw.lc.Layouts, sw.lc.Change, sw.lc.Lo, sw.lc.Hi)
	switch {
	case sw.outcome == OutcomeSignificant && p.d.Decision != stats.Different:
		return plainTxt + " but " + robustTxt + ": an alignment change hides the real change in the plain build"
	case sw.outcome == OutcomeSignificant && p.sign() != signOf(sw.lc.Change):
		return plainTxt + " but " + robustTxt + ": an alignment change reverses the real change in the plain build"
	case sw.outcome == OutcomeSignificant && (pc.Change < sw.lc.Lo || pc.Change > sw.lc.Hi):
		return plainTxt + ", outside the interval across layouts (" + robustTxt + "): alignment adds to the real change in the plain build"
	case sw.outcome != OutcomeSignificant && p.d.Decision == stats.Different:
		return plainTxt + " but " + robustTxt + ", not significant: the plain change does not survive other layouts"
	}
	return ""
}
