// The ends of a range: the main range's, which decide whether there is
// anything to bisect, and those of the ranges searched after it.

package bisect

import (
	"context"
	"fmt"
	"math"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
)

// endsRequests asks for n runs of the current range's ends (at least
// what they have).
func (b *bisector) endsRequests(n int) []Request {
	rg := b.rg()
	return []Request{{Commit: rg.Good, Runs: max(n, rg.EndsRuns[0])}, {Commit: rg.Bad, Runs: max(n, rg.EndsRuns[1])}}
}

// measureEnds compares the current range's ends. For the main range a
// change that is not there, or goes the other way, ends the bisection
// with an error; any other range then ends, with its status.
func (b *bisector) measureEnds(ctx context.Context) error {
	if b.st.Range > 0 {
		return b.rangeEnds(ctx)
	}
	r, rg := &b.st.Result, b.rg()
	n := b.opt.EndRuns
	if b.opt.Fixed > 0 {
		n = b.opt.Fixed
	}
	for {
		ss, err := b.measure(ctx, b.endsRequests(n))
		if err != nil {
			return err
		}
		b.setEnds(ss[0], ss[1])
		for i, s := range ss {
			name := [2]string{"good", "bad"}[i]
			c := [2]gitrev.Commit{r.Good, r.Bad}[i]
			if s.BuildErr != nil {
				return fmt.Errorf("%w: the %s commit %s does not build, so it cannot anchor the bisection; pick one that builds: %v", ErrEndFailed, name, c.Short(), s.BuildErr)
			}
			if f := s.failure(); f != "" {
				return fmt.Errorf("%w: the %s commit %s cannot be measured: %s", ErrEndFailed, name, c.Short(), f)
			}
		}
		if r.Better == 0 {
			return fmt.Errorf("bisect: the direction of %s (higher or lower is better) is unknown; set better: in the job file", r.Metric)
		}
		var cmp Comparison
		if b.opt.Fixed > 0 {
			cmp = meanComparison(b.goodValues(), b.badValues())
			cmp.Decision = "different"
		} else {
			cmp = b.compare(ss[0], ss[1], n)
		}
		r.Ends, rg.Ends = &cmp, &cmp
		b.logf("good %s vs bad %s: %s %+.1f%% (%s)", r.Good.Short(), r.Bad.Short(), r.Metric, cmp.Change, cmp.Reason)
		switch cmp.Decision {
		case "same":
			return fmt.Errorf("%w: %s at bad %s is within ±%.3g%% of good %s (%+.1f%%, interval [%+.1f%%, %+.1f%%], %d and %d runs): nothing to bisect",
				ErrNoChange, r.Metric, r.Bad.Short(), b.opt.EffectPct, r.Good.Short(), cmp.Change, cmp.Lo, cmp.Hi, rg.EndsRuns[0], rg.EndsRuns[1])
		case "unknown":
			if n >= b.opt.MaxRuns {
				return fmt.Errorf("%w: after %d runs of each, the runs cannot tell whether %s differs between good %s and bad %s (%s); the machine may be too noisy for this change",
					ErrNoChange, n, r.Metric, r.Good.Short(), r.Bad.Short(), cmp.Reason)
			}
			n = min(2*n, b.opt.MaxRuns)
			continue
		}
		worse := (cmp.Change > 0) == (r.Better == metric.LowerIsBetter)
		if worse == r.Improvement {
			want, got := "regression", "better"
			if r.Improvement {
				want, got = "improvement", "worse"
			}
			return fmt.Errorf("%w: %s is %s at bad %s than at good %s (%+.1f%%, %s is better): that is not a %s. Are --good and --bad swapped? (To search for the other direction, use --improvement%s.)",
				ErrWrongDirection, r.Metric, got, r.Bad.Short(), r.Good.Short(), cmp.Change, r.Better, want, map[bool]string{true: "=false", false: ""}[r.Improvement])
		}
		b.dirFromEnds()
		b.st.Phase = PhaseSteps
		return nil
	}
}

func (b *bisector) goodValues() []float64 { return b.ends[0].replicates() }

func (b *bisector) badValues() []float64 { return b.ends[1].replicates() }

// rangeEnds compares the ends of a range other than the main one: it is
// searched when they differ by more than EffectPct in the direction of the
// change (a half of a split range: by any amount), else it ends with its
// status. The first look uses the runs
// stored, with at least CheckRuns of each end (what a culprit and its
// parent have after the check), which often decides; then the ends get
// twice as many, as the main range's ends do.
func (b *bisector) rangeEnds(ctx context.Context) error {
	st, rg := b.st, b.rg()
	if b.opt.Relevance != nil {
		why, err := b.opt.Relevance(ctx, rg.Good.Hash, rg.Bad.Hash)
		if err != nil {
			return err
		}
		if why != "" {
			rg.Status = RangeSame
			rg.Note = "its ends are the same: " + why + "; not measured"
			b.logf("range %d (%s): %s", st.Range+1, b.rangeName(st.Range), rg.Note)
			st.Phase = PhaseNext
			return nil
		}
	}
	n := b.opt.CheckRuns
	for {
		ss, err := b.measure(ctx, b.endsRequests(n))
		if err != nil {
			return err
		}
		b.setEnds(ss[0], ss[1])
		for i, s := range ss {
			f := s.failure()
			if s.BuildErr != nil {
				f = firstLine(s.BuildErr.Error())
			}
			if f != "" {
				rg.Status = RangeFailed
				rg.Note = fmt.Sprintf("its %s end %s cannot be measured: %s", [2]string{"good", "bad"}[i], [2]gitrev.Commit{rg.Good, rg.Bad}[i].Short(), f)
				b.logf("range %d: %s", st.Range+1, rg.Note)
				st.Phase = PhaseNext
				return nil
			}
		}
		cmp := b.compare(ss[0], ss[1], n)
		rg.Ends = &cmp
		if cmp.Decision == "unknown" && n < b.opt.MaxRuns {
			n = min(2*n, b.opt.MaxRuns)
			continue
		}
		switch {
		case cmp.Decision == "same":
			rg.Status = RangeSame
		case cmp.Decision == "unknown":
			rg.Status = RangeUndecided
		case b.dir*logChange(cmp.Change) < 0:
			rg.Status = RangeOtherWay
		case math.Abs(cmp.Change) < b.opt.EffectPct && !rg.Split:
			rg.Status = RangeSmall
		default:
			b.logf("range %d (%s): %s %+.1f%% (%s): searching it", st.Range+1, b.rangeName(st.Range), b.st.Result.Metric, cmp.Change, cmp.Reason)
			st.Phase = PhaseSteps
			return nil
		}
		b.logf("range %d (%s): %s %+.1f%%, %s (%s)", st.Range+1, b.rangeName(st.Range), b.st.Result.Metric, cmp.Change, rg.Status, cmp.Reason)
		st.Phase = PhaseNext
		return nil
	}
}
