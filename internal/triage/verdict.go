// The end of a triage: the verdict, with its notes, disagreement and budget.

package triage

import (
	"fmt"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
	"github.com/perfbot/perfbot/internal/verdict"
)

func (e *engine) lowerIsBetter() bool { return e.res.Better != metric.HigherIsBetter }

// finish fills in the verdict, sentence, disagreement and budget. Builds
// that fail at different rates are never "no change".
func (e *engine) finish(v verdict.Verdict) *Result {
	r := e.res
	note, gap := e.failNote()
	if note != "" {
		r.Notes = append(r.Notes, note)
	}
	if v == verdict.NoChange && gap != "" {
		v = verdict.Inconclusive
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
	r.DecidedBy = e.decidedBy()
	r.Disagreement = e.disagreement()
	r.Sentence = e.sentence()
	if v == verdict.Inconclusive {
		r.Notes = append(r.Notes, e.settle()...)
	}
	e.logf("verdict: %s: %s", v, r.Sentence)
	return r
}

// decidedBy lists the experiments the verdict rests on.
func (e *engine) decidedBy() []ExperimentName {
	r := e.res
	switch {
	case e.failure != "" || r.Verdict == verdict.Inconclusive:
		return nil
	case e.byIdentity:
		return []ExperimentName{PlainExperiment}
	case r.Verdict.IsReal() && e.realBy != nil:
		out := []ExperimentName{e.realBy.name}
		if e.realBy == e.forcedOut && e.insp.dataMoved {
			out = append(out, RestoreExperiment)
		}
		if e.realBy == e.restoreOut && e.insp.textMoved && !e.textPatch() {
			out = append(out, ForcedExperiment)
		}
		if e.sweep != nil && !e.sweep.noEffect {
			out = append(out, SweepExperiment)
		}
		return out
	case r.Verdict.IsReal():
		return []ExperimentName{SweepExperiment}
	case r.Verdict.IsArtifact():
		out := []ExperimentName{PlainExperiment}
		if e.forcedOut.same() {
			return append(out, ForcedExperiment)
		}
		return append(out, RestoreExperiment)
	}
	// No change.
	if e.sweep != nil && e.sweep.outcome == OutcomeSame && !e.plain.different() {
		return []ExperimentName{PlainExperiment, SweepExperiment}
	}
	out := []ExperimentName{PlainExperiment}
	if e.forcedOut.same() {
		out = append(out, ForcedExperiment)
	}
	if e.restoreOut.same() {
		out = append(out, RestoreExperiment)
	}
	return out
}

// realChange is the estimate a real verdict rests on, in percent, with
// the words that name it.
func (e *engine) realChange() (pct float64, what string) {
	if x := e.realBy; x != nil {
		if x == e.forcedOut {
			return x.d.Comparison.Change, "under forced alignment"
		}
		return x.d.Comparison.Change, "with " + e.restoreSymbol() + "'s offset restored (" + e.restoreName() + ")"
	}
	return e.sweep.lc.Change, fmt.Sprintf("across %d layouts", e.sweep.lc.Layouts)
}

// disagreement says how the plain comparison and the estimate the verdict
// rests on differ, or "".
func (e *engine) disagreement() string {
	sw, p := e.sweep, e.plain
	if p == nil || p.exp == nil || p.exp.Outcome == OutcomeFailed {
		return ""
	}
	pc := p.d.Comparison
	plainTxt := fmt.Sprintf("the plain comparison shows %+.1f%% (%s)", pc.Change, p.d.Decision)
	if e.res.Verdict.IsReal() {
		c, where := e.realChange()
		lo, hi := e.sweep.lc.Lo, e.sweep.lc.Hi
		if e.realBy != nil {
			lo, hi = e.realBy.d.Comparison.Lo, e.realBy.d.Comparison.Hi
		}
		robustTxt := fmt.Sprintf("%s the change is %+.1f%% (CI %+.1f%% to %+.1f%%)", where, c, lo, hi)
		switch {
		case p.d.Decision != stats.Different:
			return plainTxt + " but " + robustTxt + ": an alignment change hides the real change in the plain build"
		case p.sign() != signOf(c):
			return plainTxt + " but " + robustTxt + ": an alignment change reverses the real change in the plain build"
		case pc.Hi < lo || pc.Lo > hi:
			return plainTxt + ", outside the interval " + robustTxt + ": alignment adds to or takes from the real change in the plain build"
		}
		return ""
	}
	if sw != nil && !sw.noEffect && sw.outcome != OutcomeSignificant && p.d.Decision == stats.Different {
		robustTxt := fmt.Sprintf("across %d layouts the change is %+.1f%% (CI %+.1f%% to %+.1f%%)", sw.lc.Layouts, sw.lc.Change, sw.lc.Lo, sw.lc.Hi)
		return plainTxt + " but " + robustTxt + ", not significant: the plain change does not survive other layouts"
	}
	return ""
}
