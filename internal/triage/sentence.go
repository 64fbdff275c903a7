package triage

import (
	"fmt"
	"strings"

	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/stats"
	"github.com/perfbot/perfbot/internal/verdict"
)

// sentence is the verdict in the sentence a maintainer reads first.
func (e *engine) sentence() string {
	r := e.res
	m := r.Metric
	if e.failure != "" {
		return fmt.Sprintf("verdict.Inconclusive: %s, so the runs cannot say whether %s changed.", e.failure, m)
	}
	pc := e.plain.d.Comparison
	var b strings.Builder
	switch r.Verdict {
	case verdict.RealRegression, verdict.RealImprovement:
		kind, dir := "regression", "worse"
		if r.Verdict == verdict.RealImprovement {
			kind, dir = "improvement", "better"
		}
		c, _ := e.realChange()
		fmt.Fprintf(&b, "%s makes %s %.1f%% %s than %s: a real %s, not an alignment artifact; ",
			r.Changed.Short(), m, abs(c), dir, r.Base.Short(), kind)
		if e.realBy != nil {
			b.WriteString(e.equalizedText())
		} else {
			b.WriteString(e.robustText())
		}
		if r.Disagreement != "" {
			fmt.Fprintf(&b, " The plain comparison disagrees (%+.1f%%, %s): alignment %s.", pc.Change, e.plain.d.Decision, e.alignmentRole())
		}
	case verdict.TextAlignment, verdict.DataAlignment:
		kind := "text"
		if r.Verdict == verdict.DataAlignment {
			kind = "data"
		}
		fmt.Fprintf(&b, "The %+.1f%% change in %s is a %s alignment artifact, not a real change: %s", pc.Change, m, kind, strings.Join(e.evidence(), "; "))
		if e.sweep != nil && !e.sweep.noEffect {
			b.WriteString("; " + e.robustText())
		} else {
			b.WriteString(".")
		}
	case verdict.NoChange:
		switch {
		case e.byIdentity:
			fmt.Fprintf(&b, "No change in %s: the two builds load byte-identical code and data (the plain comparison shows %+.1f%%, %s).", m, pc.Change, e.plain.d.Decision)
		case e.sweep != nil && e.sweep.outcome == OutcomeSame:
			fmt.Fprintf(&b, "No change in %s beyond ±%g%%: %s.", m, e.opt.EffectPct, e.equivText())
		case e.plain.d.Decision != stats.Same:
			fmt.Fprintf(&b, "No change in %s beyond ±%g%%: %s shows none, and the plain comparison does not show one (%+.1f%%, not settled at %d runs)",
				m, e.opt.EffectPct, e.equalSame(" and "), pc.Change, e.plain.runs)
			b.WriteString(".")
		default:
			fmt.Fprintf(&b, "No change in %s beyond ±%g%%: neither the plain build (%+.1f%%) nor %s changes", m, e.opt.EffectPct, pc.Change, e.equalSame(" nor "))
			if e.sweep != nil && !e.sweep.noEffect {
				fmt.Fprintf(&b, "; the layout sweep alone cannot bound it (%s, layout sensitivity %.0f%%)", e.robustShort(), max(e.sweep.lc.SensitivityBase, e.sweep.lc.SensitivityChanged))
			}
			b.WriteString(".")
		}
	case verdict.Inconclusive:
		fmt.Fprintf(&b, "verdict.Inconclusive: %s changes by %+.1f%% in the plain build (%s)", m, pc.Change, e.plain.d.Decision)
		if e.sweep != nil && !e.sweep.noEffect {
			fmt.Fprintf(&b, ", and %s", e.robustShort())
			if e.sweep.outcome == OutcomeSame {
				b.WriteString(", so the plain change is a layout artifact")
			}
		}
		if ev := e.failedEvidence(); len(ev) > 0 {
			b.WriteString("; " + strings.Join(ev, "; "))
		}
		if e.failGap != "" {
			b.WriteString("; the commits fail at different rates: " + e.failGap)
		}
		b.WriteString(".")
	}
	return b.String()
}

// robustText states the sweep's estimate as a clause ending in ".".
func (e *engine) robustText() string {
	lc := e.sweep.lc
	sig := "significant"
	if !lc.Significant {
		sig = "not significant"
	}
	return fmt.Sprintf("across %d code/data layouts the change is %+.1f%% (%.0f%% CI %+.1f%% to %+.1f%%, %s).",
		lc.Layouts, lc.Change, 100*(1-e.opt.Alpha), lc.Lo, lc.Hi, sig)
}

// robustShort is robustText without the closing period.
func (e *engine) robustShort() string {
	return strings.TrimSuffix(e.robustText(), ".")
}

// equivText states the sweep's equivalence interval.
func (e *engine) equivText() string {
	eq := e.sweep.eq
	return fmt.Sprintf("across %d code/data layouts the change is %+.1f%% (%.0f%% CI %+.1f%% to %+.1f%%)",
		eq.Layouts, eq.Change, 100*(1-2*e.opt.Alpha), eq.Lo, eq.Hi)
}

// alignmentRole says what alignment did to a real change in the plain
// build.
func (e *engine) alignmentRole() string {
	pc := e.plain.d.Comparison
	c, _ := e.realChange()
	switch {
	case e.plain.d.Decision != stats.Different:
		return "hides it there"
	case signOf(pc.Change) != signOf(c):
		return "reverses it there"
	case abs(pc.Change) > abs(c):
		return "adds to it there"
	}
	return "takes from it there"
}

// equalizedText states, as a clause ending in ".", the change that the
// equalising experiment keeps, why the other kind of layout cannot
// explain it, and the sweep that weighs it.
func (e *engine) equalizedText() string {
	x := e.realBy
	c := x.d.Comparison
	var b strings.Builder
	if x == e.forcedOut {
		fmt.Fprintf(&b, "built with functions and loops aligned to 64 bytes the change is %+.1f%% (%.0f%% CI %+.1f%% to %+.1f%%)", c.Change, 100*c.Confidence, c.Lo, c.Hi)
		if !e.insp.dataMoved {
			b.WriteString(", and no data object moved in its cache line")
		} else {
			fmt.Fprintf(&b, ", and restoring %s's offset (%s) keeps it (%+.1f%% against the base)", e.restoreSymbol(), e.restoreName(), e.restoreOut.d.Comparison.Change)
		}
	} else {
		fmt.Fprintf(&b, "with %s's offset restored (%s) the change is %+.1f%% (%.0f%% CI %+.1f%% to %+.1f%%)", e.restoreSymbol(), e.restoreName(), c.Change, 100*c.Confidence, c.Lo, c.Hi)
		switch {
		case e.textPatch():
			b.WriteString(", and no data object moved in its cache line")
		case !e.insp.textMoved:
			b.WriteString(", and no function moved in its cache line")
		default:
			fmt.Fprintf(&b, ", and forced alignment keeps it (%+.1f%%)", e.forcedOut.d.Comparison.Change)
		}
	}
	if sw := e.sweep; sw != nil && !sw.noEffect {
		fmt.Fprintf(&b, "; the layout sweep agrees: %s", e.robustText())
	} else {
		b.WriteString("; the build ignores the layout knobs, so no sweep weighs it.")
	}
	return b.String()
}

// equalSame names the equalising experiments that show no change, joined
// by sep.
func (e *engine) equalSame(sep string) string {
	var parts []string
	if e.forcedOut.same() {
		parts = append(parts, fmt.Sprintf("the forced-alignment build (%+.1f%%)", e.forcedOut.d.Comparison.Change))
	}
	if e.restoreOut.same() {
		parts = append(parts, fmt.Sprintf("the build with %s's offset restored by %s (%+.1f%% against the base)", e.restoreSymbol(), e.restoreName(), e.restoreOut.d.Comparison.Change))
	}
	return strings.Join(parts, sep)
}

// evidence lists the experiments that explain an alignment verdict.
func (e *engine) evidence() []string {
	var ev []string
	if e.forcedOut.same() {
		ev = append(ev, fmt.Sprintf("it vanishes when both commits are built with functions and loops aligned to 64 bytes (%+.1f%%)", e.forcedOut.d.Comparison.Change))
	}
	if e.restoreOut.same() && e.usePatch() && e.insp.patch.identical {
		sp := e.insp.patch.info
		ev = append(ev, fmt.Sprintf("the source patch that puts back %d bytes at %s:%d (%s) makes the changed commit load the base build's code and data byte for byte, "+
			"so the commit changes nothing in the build but that layout shift, which moved %s (the patched build measures like the base: %+.1f%%)",
			sp.Bytes, sp.File, sp.Line, sp.Root, e.restoreSymbol(), e.restoreOut.d.Comparison.Change))
	} else if e.restoreOut.same() && e.usePatch() {
		sp := e.insp.patch.info
		what := "address"
		if !sp.Exact {
			what = "offset mod 64"
		}
		ev = append(ev, fmt.Sprintf("the source patch that puts back %d bytes at %s:%d (%s), so that %s and everything after it in %s get back their base %s, gives back the base figure (%+.1f%% against the base)",
			sp.Bytes, sp.File, sp.Line, sp.Root, e.restoreSymbol(), sp.Section, what, e.restoreOut.d.Comparison.Change))
	} else if e.restoreOut.same() {
		p := e.insp.padding
		ev = append(ev, fmt.Sprintf("padding %d bytes into %s so that %s gets back its offset %d in its cache line gives back the base figure (%+.1f%% against the base)",
			p.Bytes, p.Section, p.Symbol, p.OffA, e.restoreOut.d.Comparison.Change))
	}
	if e.forcedOut.different() && e.res.Verdict == verdict.DataAlignment {
		ev = append(ev, fmt.Sprintf("forced function alignment does not remove it (%+.1f%%), as expected of data", e.forcedOut.d.Comparison.Change))
	}
	return ev
}

// failedEvidence lists the attribution experiments that ran and did not
// explain the change.
func (e *engine) failedEvidence() []string {
	var ev []string
	if f := e.forcedOut; f != nil {
		switch {
		case !f.informative:
			ev = append(ev, "forced alignment changed nothing in the build")
		case !f.same():
			ev = append(ev, fmt.Sprintf("under forced alignment the change is %+.1f%% (%s)", f.d.Comparison.Change, f.d.Decision))
		}
	}
	if r := e.restoreOut; r != nil {
		switch {
		case !r.informative:
			ev = append(ev, "the restore padding did not restore "+e.insp.padding.Symbol+"'s offset")
		case !r.same():
			ev = append(ev, fmt.Sprintf("restoring %s's offset (%s) leaves %+.1f%% against the base (%s)", e.restoreSymbol(), e.restoreName(), r.d.Comparison.Change, r.d.Decision))
		}
	}
	return ev
}

// settle says what more would settle an inconclusive triage.
func (e *engine) settle() []string {
	var out []string
	if e.failure != "" {
		return []string{"most runs of a build failed: their logs (named above) say why; fix the benchmark or the machine, " +
			"then triage again (failed runs stay in the store and are reused, so a failure of the machine needs a fresh --store)"}
	}
	if e.failGap != "" {
		out = append(out, "the commits fail at different rates (notes above): read the failed runs' logs; a change that makes the benchmark fail is a change even where the timings of the other runs agree")
	}
	if e.plain.d.Decision == stats.Unknown && !e.canLook(e.plain) {
		out = append(out, fmt.Sprintf("the plain comparison needs more than %d runs a side at this noise: raise --max-runs or run on a quieter machine", e.opt.MaxRuns))
	}
	if f := e.forcedOut; f.different() && !e.dataRuledOut() {
		out = append(out, fmt.Sprintf("forced alignment keeps a change of %+.1f%%, but data objects moved in their cache lines and no restore ruled them out: "+
			"forced alignment does not move data, so that change may be a data alignment artifact", f.d.Comparison.Change))
	}
	if x := e.equalized(); x != nil && e.sweep != nil && !e.sweepAgrees(x) {
		out = append(out, fmt.Sprintf("%s keeps a change of %+.1f%%, but the layout sweep does not agree (%s): an alignment effect that the experiment does not equalise would look like this",
			triageStep(x.name), x.d.Comparison.Change, e.robustShort()))
	}
	if sw := e.sweep; sw != nil && sw.noEffect {
		out = append(out, "the build ignores the layout knobs: pick the --preset of its toolchain, or map the PERFBOT_* variables in the build command (docs/knobs.md)")
	}
	if sw := e.sweep; sw != nil && sw.outcome == OutcomeUnclear {
		if sw.canGrow && !sw.noEffect && sw.layouts < knobs.MaxLayouts {
			out = append(out, fmt.Sprintf("the layout sweep stopped at %d layouts; more layouts would narrow its interval (%+.1f%% to %+.1f%%)", sw.layouts, sw.lc.Lo, sw.lc.Hi))
		} else {
			out = append(out, fmt.Sprintf("the layouts spread the figure by %.0f%%, too much to bound the change with %d layouts; a profile (perfbot layout diff --profile) would point at the hot symbol to restore", max(sw.lc.SensitivityBase, sw.lc.SensitivityChanged), sw.layouts))
		}
	}
	if e.insp.padding == nil && !e.insp.patchable && e.plain.different() {
		out = append(out, "no symbol changed its offset in its cache line, so there was nothing to restore")
	} else if e.insp.restoreErr != nil && !e.insp.identical && !e.usePatch() {
		out = append(out, "no restore experiment: "+e.insp.restoreErr.Error())
	}
	if e.forcedOut.different() && e.restoreOut.different() && e.forcedOut.sign() == e.restoreOut.sign() && e.equalized() == nil {
		out = append(out, fmt.Sprintf("forced alignment (%+.1f%%) and the restore by %s (%+.1f%%) both keep a change: likely a real change that alignment distorts in the plain build",
			e.forcedOut.d.Comparison.Change, e.restoreName(), e.restoreOut.d.Comparison.Change))
	}
	return out
}

// restoreName names what the restore experiment builds: the source patch
// at its spot, or the padding of a section.
func (e *engine) restoreName() string {
	if e.usePatch() {
		sp := e.insp.patch.info
		return fmt.Sprintf("the source patch at %s:%d", sp.File, sp.Line)
	}
	if p := e.insp.padding; p != nil {
		return fmt.Sprintf("%d bytes of padding in %s", p.Bytes, p.Section)
	}
	return "no restore"
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// kindName names a symbol kind for Suspect.Kind.
func kindName(k layout.Kind) SuspectKind { return SuspectKind(k.String()) }
