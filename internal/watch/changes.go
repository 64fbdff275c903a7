package watch

import (
	"math"
	"slices"

	"github.com/perfbot/perfbot/internal/changepoint"
	"github.com/perfbot/perfbot/internal/history"
)

// span is where a change lies: between the history's points From and To
// (From < To; To-1 unless points between them have no ratio to the
// anchor, so that the change may be at any commit after From up to To).
type span struct{ From, To int }

// changes returns the spans of the history's points where a change
// starts, oldest first, one per end point To. Two detectors (three
// with an anchor), any suffices (every candidate is confirmed by
// bisection's check and triaged before anyone is told):
//
//   - the direct test of each step: the commit was measured in the same
//     interleaved rounds as the commit before it, and their paired test,
//     or Welch's t-test of the logs of the same runs, is significant at
//     the job's alpha with a change of at least the job's effect; this
//     sees a fresh change at the head at once (the t-test because a
//     cycle's 8 pairs at alpha 0.01 leave the paired test no room: one
//     pair that the machine's load turned round hides even a 4x step
//     from it, and from a rank test of the 16 runs once the slowed run
//     passes every run of the other commit);
//   - package changepoint over the chain of steps: a step that stands out
//     of the history's own step-to-step noise (its local median and MAD,
//     which keeps slow drift and busy sessions out) at p <= 0.001 and the
//     job's effect;
//   - with the job's anchor: E-divisive means over the ratios to the
//     anchor (anchorChanges).
func changes(s *history.Series, jc JobConfig) []span {
	var out []span
	for k := 1; k < len(s.Points); k++ {
		p := s.Points[k]
		if p.NewChain || p.Ref != s.Points[k-1].Commit.Hash {
			continue // not measured against its predecessor in the history
		}
		if (p.P > 0 && p.P < jc.Alpha || p.TP > 0 && p.TP < jc.Alpha) && math.Abs(p.Step) >= jc.Effect {
			out = append(out, span{k - 1, k})
		}
	}
	if len(s.Points) < 2 {
		return out
	}
	steps := make([]changepoint.Point, 0, len(s.Points)-1)
	for k, p := range s.Points[1:] {
		before := s.Points[k]
		var st changepoint.Point
		switch {
		case p.NewChain:
			st = changepoint.Point{Value: 1} // no comparison across the break
		case p.Ref == before.Commit.Hash:
			st = changepoint.Point{Value: 1 + p.Step/100, Lo: 1 + p.Lo/100, Hi: 1 + p.Hi/100}
		default:
			// Measured against an earlier point: the step to its
			// predecessor is the ratio of their chained levels.
			st = changepoint.Point{Value: p.Level / before.Level}
		}
		if !(st.Value > 0) || st.Lo <= 0 || st.Hi <= 0 || st.Lo > st.Value || st.Value > st.Hi {
			st.Lo, st.Hi = 0, 0 // no usable interval: the step alone
		}
		if !(st.Value > 0) {
			st.Value = 1
		}
		steps = append(steps, st)
	}
	// One span per end point: the narrowest (a step's, found first).
	add := func(sp span) {
		if !slices.ContainsFunc(out, func(o span) bool { return o.To == sp.To }) && sp.From >= 0 && sp.From < sp.To && sp.To < len(s.Points) {
			out = append(out, sp)
		}
	}
	if chain, err := changepoint.FromSteps(s.Points[0].Level, steps, 1-jc.Alpha); err == nil {
		for _, cp := range changepoint.Detect(chain, changepoint.Options{MinMagnitude: jc.Effect / 100}) {
			add(span{cp.Index - 1, cp.Index})
		}
	}
	if jc.Anchor {
		for _, sp := range anchorChanges(s, jc) {
			add(sp)
		}
	}
	slices.SortFunc(out, func(a, b span) int { return a.To - b.To })
	return out
}

// anchorChanges runs E-divisive means over the points' ratios to the
// anchor (those whose session measured it), which are comparable across
// sessions with independent errors, so a segment's points pool: a change
// too small or too noisy for one step's test shows once a few points on
// each side of it are in (changepoint.Options.MinSize). A change between
// two ratios spans the points between them that have none (their sessions
// did not measure the anchor): it may lie at any of them.
func anchorChanges(s *history.Series, jc JobConfig) []span {
	var pts []changepoint.Point
	var idx []int // point index of each ratio
	for k, p := range s.Points {
		if p.Ratio <= 0 {
			continue
		}
		pt := changepoint.Point{Value: p.Ratio, Lo: p.RatioLo, Hi: p.RatioHi}
		if !(pt.Lo > 0 && pt.Lo <= pt.Value && pt.Value <= pt.Hi) {
			pt.Lo, pt.Hi = 0, 0
		}
		pts, idx = append(pts, pt), append(idx, k)
	}
	if len(pts) < 2 {
		return nil
	}
	vs, err := changepoint.FromValues(pts, 1-jc.Alpha)
	if err != nil {
		return nil
	}
	var out []span
	for _, cp := range changepoint.Detect(vs, changepoint.Options{MinMagnitude: jc.Effect / 100}) {
		if cp.Index >= 1 {
			out = append(out, span{idx[cp.Index-1], idx[cp.Index]})
		}
	}
	return out
}
