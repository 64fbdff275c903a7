// The search: measuring the ends, picking and classifying each step.

package bisect

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/stats"
)

// compare decides between reference ref and commit c, unpaired: their runs
// were mostly taken at different times.
func (b *bisector) compare(ref, c Samples, startN int) Comparison {
	return unpairedComparison(ref.replicates(), c.replicates(), b.decideOptions(startN))
}

func (b *bisector) decideOptions(startN int) stats.DecideOptions {
	return stats.DecideOptions{Alpha: b.opt.Alpha, MinEffect: b.opt.EffectPct / 100, StartN: startN, MaxN: b.opt.MaxRuns}
}

// pick returns the untested position of (lo, hi) nearest the middle, the
// lower one on a tie, or -1. Commits skipped in any range on the same path
// are skipped.
func (b *bisector) pick(lo, hi int) int {
	skipped := map[int]bool{}
	for _, s := range b.st.Result.Steps {
		if s.Verdict == Skip && b.samePath(s.Range) {
			skipped[s.Index] = true
		}
	}
	mid := lo + (hi-lo)/2
	for d := 0; mid-d > lo || mid+d < hi; d++ {
		for _, i := range []int{mid - d, mid + d} {
			if i > lo && i < hi && !skipped[i] {
				return i
			}
		}
	}
	return -1
}

// step tests one candidate, or ends the search.
func (b *bisector) step(ctx context.Context) error {
	st, r, rg := b.st, &b.st.Result, b.rg()
	if err := b.loadEnds(ctx); err != nil {
		return err
	}
	if st.Hi-st.Lo == 1 {
		return b.land(ctx)
	}
	if b.opt.Parallel > 1 && b.opt.Fixed == 0 && b.rg().Kind != RangeMerge && len(b.candidates(st.Lo, st.Hi, 2)) == 2 {
		if why := b.runsSpent(); why == "" {
			return b.parallelStep(ctx)
		}
	}
	if why := b.runsSpent(); why != "" && rg.Kind != RangeMerge {
		rg.Status = RangeBudget
		rg.Note = fmt.Sprintf("%s during the search: the change is after %s and at or before %s (%d commits)", why, b.at(st.Lo).Short(), b.at(st.Hi).Short(), st.Hi-st.Lo)
		b.logf("range %d: %s", st.Range+1, rg.Note)
		st.Phase = PhaseNext
		return nil
	}
	m := b.pick(st.Lo, st.Hi)
	if m < 0 {
		// Only skipped commits left: like git bisect, name them all.
		rg.Candidates = append([]gitrev.Commit(nil), b.path[st.Lo+1:st.Hi+1]...)
		p := b.at(st.Lo)
		rg.Parent = &p
		b.logf("only skipped commits are left: the first bad commit is one of %d", len(rg.Candidates))
		st.Phase = PhaseNext
		return nil
	}
	cand := b.path[m]
	remaining := st.Hi - st.Lo
	b.logf("step %d: testing %s %q (%d commits left, about %d more steps)", len(r.Steps)+1, cand.Short(), cand.Subject, remaining, stepsLeft(remaining))

	s := Step{N: len(r.Steps) + 1, Index: m, Commit: cand, Remaining: remaining, Range: st.Range}
	decided, err := b.inherit(ctx, &s, st.Lo, st.Hi)
	var next []gitrev.Commit
	if err == nil && !decided {
		// Work ahead: the two commits the next step may test.
		if b.opt.Speculate != SpeculateNone {
			for _, i := range []int{b.pick(st.Lo, m), b.pick(m, st.Hi)} {
				if i >= 0 {
					next = append(next, b.path[i])
				}
			}
		}
		if pf, ok := b.opt.Measurer.(Prefetcher); ok && b.opt.Speculate == SpeculateBuild && len(next) > 0 {
			pf.Prefetch(ctx, next)
		}
	}
	switch {
	case err != nil:
		return err
	case decided:
	case b.opt.Fixed > 0:
		err = b.classifyFixed(ctx, &s)
	default:
		err = b.classify(ctx, &s, next)
	}
	if err != nil {
		return err
	}
	r.Steps = append(r.Steps, s)
	if s.Between {
		b.logf("step %d: %s differs from both ends: %s", s.N, cand.Short(), s.Reason)
		return b.split(m)
	}
	switch s.Verdict {
	case Good:
		st.Lo = m
	case Bad:
		st.Hi = m
	case Skip:
		if strings.HasPrefix(s.Reason, "build failed") {
			r.BuildFailures++
		}
	}
	b.logf("step %d: %s is %s: %s%s", s.N, cand.Short(), s.Verdict, s.Reason, noteSuffix(s.Note))
	return nil
}

func noteSuffix(n string) string {
	if n == "" {
		return ""
	}
	return " (" + n + ")"
}

// stepsLeft is the number of halvings that bring n commits down to one.
func stepsLeft(n int) int {
	s := 0
	for n > 1 {
		n = (n + 1) / 2
		s++
	}
	return s
}

// dirFromEnds sets the direction of the change from the main range's
// ends; the other ranges search for a change in the same direction.
func (b *bisector) dirFromEnds() {
	b.dir = 1
	if c := b.st.Result.Ranges[0].Ends; c != nil && c.Change < 0 {
		b.dir = -1
	}
}

// classify decides which side of the culprit s.Commit is on.
func (b *bisector) classify(ctx context.Context, s *Step, next []gitrev.Commit) error {
	r := &b.st.Result
	n := b.opt.StepRuns
	for look := 0; ; look++ {
		// The ends get half as many runs as the candidate if they have
		// fewer, so that the tests are not limited by the ends' side
		// (these runs stay for the later steps), and one of them gets a
		// fresh run in the middle of the candidate's: a canary of the
		// machine's state (see canaryAlarm).
		before := [2]int{b.ends[0].runs(), b.ends[1].runs()}
		want := [2]int{max(n/2, before[0]), max(n/2, before[1])}
		canary := (s.N + look) % 2
		want[canary] = max(want[canary], before[canary]+1)
		rg := b.rg()
		reqs := []Request{{Commit: s.Commit, Runs: n}, {Commit: rg.Good, Runs: want[0]}, {Commit: rg.Bad, Runs: want[1]}}
		if b.opt.Speculate == SpeculateRuns {
			for _, c := range next {
				reqs = append(reqs, Request{Commit: c, Runs: b.opt.StepRuns})
			}
		}
		old := b.ends
		ss, err := b.measure(ctx, reqs)
		if err != nil {
			return err
		}
		b.setEnds(ss[1], ss[2])
		c := ss[0]
		s.Runs = c.runs()
		if c.BuildErr != nil {
			s.Verdict, s.Reason = Skip, firstLine(c.BuildErr.Error()) // "build failed: <commit>: ..."
			return nil
		}
		if f := c.failure(); f != "" && s.Runs >= n {
			s.Verdict, s.Reason = Skip, f
			return nil
		}
		vg := b.compare(b.ends[0], c, b.opt.StepRuns)
		vb := b.compare(b.ends[1], c, b.opt.StepRuns)
		s.VsGood, s.VsBad = &vg, &vb
		near := b.nearer(c)
		verdict, reason, note := b.evidence(vg, vb, near)
		s.Between = note != "" && verdict == Bad && b.opt.MaxCulprits > 1
		// Load only makes runs worse, so only a verdict for the worse
		// side can be its doing.
		worse := Bad
		if r.Improvement {
			worse = Good
		}
		if alarm := b.canaryAlarm(old, before); alarm != "" && verdict == worse && n < b.opt.MaxRuns {
			s.Disturbed++
			b.logf("step %d: look at %d runs not trusted: %s", s.N, s.Runs, alarm)
			verdict = ""
		}
		if verdict != "" {
			s.Verdict, s.Reason, s.Note = verdict, reason, note
			return nil
		}
		if n >= b.opt.MaxRuns {
			s.Verdict, s.Guessed = near, true
			s.Reason = fmt.Sprintf("undecided after %d runs (vs good: %s; vs bad: %s); placed with the nearer end", s.Runs, vg.Reason, vb.Reason)
			return nil
		}
		n = min(2*max(n, s.Runs), b.opt.MaxRuns)
	}
}

// setEnds records the ends' samples.
func (b *bisector) setEnds(good, bad Samples) {
	b.ends = [2]Samples{good, bad}
	b.rg().EndsRuns = [2]int{good.runs(), bad.runs()}
}

// canaryAlarm says why the runs of the ends taken in the last batch (those
// after before) show that the machine was not in its usual state: one is
// off its end's median (over old, the runs before the batch) by more than
// a quarter of the distance between the ends and more than three times the
// end's usual spread (1.4826 MAD of the log values). The candidate's runs
// of that batch were interleaved with them, so a burst of load that could
// make a good commit look bad likely shows on them too. "" when all is
// well.
func (b *bisector) canaryAlarm(old [2]Samples, before [2]int) string {
	mg, mb := stats.Median(old[0].replicates()), stats.Median(old[1].replicates())
	if !(mg > 0 && mb > 0) {
		return ""
	}
	gap := math.Abs(math.Log(mb / mg))
	for k := range 2 {
		logs := logsOf(old[k].replicates())
		med := stats.Median(logs)
		dev := make([]float64, len(logs))
		for i, x := range logs {
			dev[i] = math.Abs(x - med)
		}
		limit := max(gap/4, 3*1.4826*stats.Median(dev))
		for _, v := range b.ends[k].replicatesAfter(before[k]) {
			if d := math.Log(v) - med; math.Abs(d) > limit {
				return fmt.Sprintf("a run of the %s end taken among them is %+.1f%% off its usual figure", [2]string{"good", "bad"}[k], 100*math.Expm1(d))
			}
		}
	}
	return ""
}

func logsOf(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 {
			out = append(out, math.Log(x))
		}
	}
	return out
}

// evidence turns the two comparisons into a verdict ("" for unknown), the
// reason, and a note when the evidence conflicts.
func (b *bisector) evidence(vg, vb Comparison, near Verdict) (verdict Verdict, reason, note string) {
	xg, xb := logChange(vg.Change), logChange(vb.Change)
	// Toward bad, from good: dir*xg > 0. On the good side of bad: dir*xb < 0.
	var good, bad []string
	switch vg.Decision {
	case "same":
		good = append(good, fmt.Sprintf("same as good (%+.1f%%)", vg.Change))
	case "different":
		if b.dir*xg > 0 {
			bad = append(bad, fmt.Sprintf("differs from good by %+.1f%%, toward bad", vg.Change))
		} else {
			good = append(good, fmt.Sprintf("differs from good by %+.1f%%, away from bad", vg.Change))
		}
	}
	switch vb.Decision {
	case "same":
		bad = append(bad, fmt.Sprintf("same as bad (%+.1f%%)", vb.Change))
	case "different":
		if b.dir*xb < 0 {
			good = append(good, fmt.Sprintf("differs from bad by %+.1f%%, toward good", vb.Change))
		} else {
			bad = append(bad, fmt.Sprintf("differs from bad by %+.1f%%, beyond it", vb.Change))
		}
	}
	// Part of the change before it and part after, each at least
	// EffectPct (what a range needs to be searched): the range is searched
	// as two (see split). Smaller differences may be noise around a single
	// change: the nearer end decides, as it does with MaxCulprits 1.
	between := vg.Decision == "different" && b.dir*xg > 0 && vb.Decision == "different" && b.dir*xb < 0 &&
		math.Abs(vg.Change) >= b.opt.EffectPct && math.Abs(vb.Change) >= b.opt.EffectPct
	switch {
	case between && b.opt.MaxCulprits > 1:
		return Bad, strings.Join(append(good, bad...), "; ") + "; between the ends: the range holds more than one change, searched as two ranges split here",
			"more than one change in the range: this commit differs from both ends"
	case len(good) > 0 && len(bad) > 0:
		return near, strings.Join(append(good, bad...), "; ") + "; nearer to " + string(near),
			"more than one change in the range: this commit differs from both ends"
	case len(good) > 0 && near == Good:
		return Good, strings.Join(good, "; "), ""
	case len(bad) > 0 && near == Bad:
		return Bad, strings.Join(bad, "; "), ""
	}
	// No evidence, or evidence for the side whose end is the farther:
	// an outlier among few runs can do that; take more.
	return "", "", ""
}

// nearer returns the verdict of the end whose figure is nearer to c's, in
// log terms. Figures are each commit's best quartile (the 25th percentile
// of a lower-is-better metric, the 75th of a higher-is-better one): load
// only ever makes runs worse, so the better runs show a commit's speed
// even when a burst spoiled some of them.
func (b *bisector) nearer(c Samples) Verdict { return b.nearerTo(c, b.ends[0], b.ends[1]) }

// nearerTo is nearer with the ends' runs given.
func (b *bisector) nearerTo(c, good, bad Samples) Verdict {
	q := func(s Samples) float64 { return bestQuartile(s.replicates(), b.st.Result.Better) }
	xc, xg, xb := q(c), q(good), q(bad)
	if !(xc > 0 && xg > 0 && xb > 0) {
		return Good
	}
	if math.Abs(math.Log(xc/xg)) <= math.Abs(math.Log(xb/xc)) {
		return Good
	}
	return Bad
}

func logChange(pct float64) float64 {
	if pct <= -100 || math.IsNaN(pct) {
		return math.Inf(-1)
	}
	return math.Log1p(pct / 100)
}

// classifyFixed is the plain scheme: Fixed runs, then the side of the
// midpoint of the ends' means.
func (b *bisector) classifyFixed(ctx context.Context, s *Step) error {
	ss, err := b.measure(ctx, []Request{{Commit: s.Commit, Runs: b.opt.Fixed}})
	if err != nil {
		return err
	}
	c := ss[0]
	s.Runs = c.runs()
	if c.BuildErr != nil {
		s.Verdict, s.Reason = Skip, firstLine(c.BuildErr.Error()) // "build failed: <commit>: ..."
		return nil
	}
	if f := c.failure(); f != "" {
		s.Verdict, s.Reason = Skip, f
		return nil
	}
	vg, vb := meanComparison(b.goodValues(), c.replicates()), meanComparison(b.badValues(), c.replicates())
	s.VsGood, s.VsBad = &vg, &vb
	mg, mb, mc := mean(b.goodValues()), mean(b.badValues()), mean(c.replicates())
	mid := (mg + mb) / 2
	if (mc > mid) == (mb > mg) {
		s.Verdict = Bad
	} else {
		s.Verdict = Good
	}
	s.Reason = fmt.Sprintf("mean %.4g is on the %s side of the midpoint %.4g", mc, s.Verdict, mid)
	return nil
}
