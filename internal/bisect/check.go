// The end of the search: landing on the culprit, the check, re-tests and triage.

package bisect

import (
	"context"
	"fmt"
	"strings"

	"github.com/perfbot/perfbot/internal/gitrev"
)

// land records the culprit and moves to the check.
func (b *bisector) land(ctx context.Context) error {
	st, r, rg := b.st, &b.st.Result, b.rg()
	c, p := b.path[st.Hi], b.at(st.Lo)
	rg.Culprit, rg.Parent = &c, &p
	merge, err := b.isMerge(ctx, c)
	if err != nil {
		return err
	}
	rg.Merge = merge
	b.logf("first bad commit%s: %s %q (after %d steps)", b.rangeSuffix(), c.Short(), c.Subject, len(r.Steps))
	if b.opt.Fixed > 0 {
		st.Phase = PhaseNext
		return nil
	}
	// The check's fresh runs are the ones after those stored now.
	ss, err := b.measure(ctx, []Request{{Commit: p}, {Commit: c}})
	if err != nil {
		return err
	}
	st.CheckFrom = [2]int{ss[0].maxIndex(), ss[1].maxIndex()}
	st.Phase = PhaseCheck
	return nil
}

// check re-measures parent and culprit with fresh interleaved runs.
func (b *bisector) check(ctx context.Context) error {
	st, r := b.st, b.rg()
	p, c := *r.Parent, *r.Culprit
	n := b.opt.CheckRuns
	for {
		ss, err := b.measure(ctx, []Request{{Commit: p, Runs: st.CheckFrom[0] + n, From: st.CheckFrom[0]}, {Commit: c, Runs: st.CheckFrom[1] + n, From: st.CheckFrom[1]}})
		if err != nil {
			return err
		}
		for i, s := range ss {
			if s.BuildErr != nil {
				return fmt.Errorf("bisect: check: %s no longer builds: %w", [2]gitrev.Commit{p, c}[i].Short(), s.BuildErr)
			}
		}
		pv, cv := ss[0].replicatesAfter(st.CheckFrom[0]), ss[1].replicatesAfter(st.CheckFrom[1])
		cmp := unpairedComparison(pv, cv, b.decideOptions(b.opt.CheckRuns))
		r.Check = &Check{Comparison: cmp,
			ParentRuns:  [2]int{st.CheckFrom[0] + 1, st.CheckFrom[0] + n},
			CulpritRuns: [2]int{st.CheckFrom[1] + 1, st.CheckFrom[1] + n}}
		if cmp.Decision == "unknown" && n < b.opt.MaxRuns {
			n = min(2*n, b.opt.MaxRuns)
			b.logf("check: %s; more runs (%d of each)", cmp.Reason, n)
			continue
		}
		toward := b.dir*logChange(cmp.Change) > 0
		switch {
		case cmp.Decision == "different" && toward:
			r.Check.Confirmed = true
			r.Check.Reason = fmt.Sprintf("confirmed: in %d fresh interleaved runs of each, the culprit differs from its parent by %+.1f%% [%+.1f%%, %+.1f%%] (%s)", cmp.N, cmp.Change, cmp.Lo, cmp.Hi, cmp.Reason)
		case cmp.Decision == "different":
			r.Check.Reason = fmt.Sprintf("not confirmed: in fresh runs the culprit differs from its parent the other way (%+.1f%%)", cmp.Change)
		case cmp.Decision == "same":
			r.Check.Reason = fmt.Sprintf("not confirmed: in fresh runs the culprit performs like its parent (%+.1f%%, within ±%.3g%%); the change may be spread over several commits, or the bisection was misled by noise", cmp.Change, b.opt.EffectPct)
		default:
			r.Check.Reason = fmt.Sprintf("not confirmed: fresh runs cannot tell culprit and parent apart (%s)", cmp.Reason)
		}
		b.logf("check: %s", r.Check.Reason)
		st.Phase = PhaseNext
		if !r.Check.Confirmed && st.Retests < MaxRetests {
			st.Phase = PhaseRetest
		}
		return nil
	}
}

// MaxRetests is how many times a bisection re-tests a culprit that the
// check did not confirm.
const MaxRetests = 2

// retest runs after a check that did not confirm the culprit: one of the
// two decisions that bracket it was wrong (noise, a burst of load). It
// re-tests the culprit, then its parent, with every run they now have (the
// check's fresh runs included) and more while unknown; when one of them
// turns out to be on the other side, the bisection goes on from there.
func (b *bisector) retest(ctx context.Context) error {
	st, r, rg := b.st, &b.st.Result, b.rg()
	if err := b.loadEnds(ctx); err != nil {
		return err
	}
	st.Retests++
	failed := fmt.Sprintf("the check did not confirm %s%s (%s)", rg.Culprit.Short(), b.rangeSuffix(), rg.Check.Reason)
	test := func(i int) (Verdict, error) {
		s := Step{N: len(r.Steps) + 1, Index: i, Commit: b.path[i], Remaining: st.Hi - st.Lo, Retest: true, Range: st.Range}
		if err := b.classify(ctx, &s, nil); err != nil {
			return "", err
		}
		r.Steps = append(r.Steps, s)
		b.logf("re-test %d: %s is %s: %s", st.Retests, s.Commit.Short(), s.Verdict, s.Reason)
		if s.Between {
			return "", b.split(i)
		}
		return s.Verdict, nil
	}
	v, err := test(st.Hi)
	if err != nil || v == "" {
		return err
	}
	lo, hi := st.Lo, st.Hi
	switch {
	case v == Good:
		lo, hi = st.Hi, b.nextBad(st.Hi)
	case st.Lo > rg.Span[0]:
		v, err := test(st.Lo)
		if err != nil || v == "" {
			return err
		}
		if v == Bad {
			lo, hi = b.prevGood(st.Lo), st.Lo
		}
	}
	if lo == st.Lo && hi == st.Hi {
		r.Notes = append(r.Notes, failed+"; re-tests confirmed both sides, so the change is smaller or more spread out than the check can see")
		st.Phase = PhaseNext
		return nil
	}
	r.Notes = append(r.Notes, failed+"; a re-test moved the search, which went on")
	rg.Culprit, rg.Parent, rg.Check, rg.Merge = nil, nil, nil, false
	st.Lo, st.Hi = lo, hi
	st.Phase = PhaseSteps
	return nil
}

// latest returns the latest verdict of each position tested in the
// current range.
func (b *bisector) latest() map[int]Verdict {
	v := map[int]Verdict{}
	for _, s := range b.st.Result.Steps {
		if s.Range == b.st.Range {
			v[s.Index] = s.Verdict
		}
	}
	return v
}

// nextBad is the first position after i found bad, else the bad end.
func (b *bisector) nextBad(i int) int {
	best := b.rg().Span[1]
	for j, v := range b.latest() {
		if v == Bad && j > i && j < best {
			best = j
		}
	}
	return best
}

// prevGood is the last position before i found good, else the good end.
func (b *bisector) prevGood(i int) int {
	best := b.rg().Span[0]
	for j, v := range b.latest() {
		if v == Good && j < i && j > best {
			best = j
		}
	}
	return best
}

// loadEnds fetches the ends' samples after a resume (they are stored).
func (b *bisector) loadEnds(ctx context.Context) error {
	if b.ends[0].Layouts != nil {
		return nil
	}
	ss, err := b.measure(ctx, b.endsRequests(0))
	if err != nil {
		return err
	}
	b.setEnds(ss[0], ss[1])
	return nil
}

// triage triages one culprit that has no triage yet (every confirmed
// culprit; without one, the main range's unconfirmed culprit), and ends
// the bisection when none is left.
func (b *bisector) triage(ctx context.Context) error {
	r := &b.st.Result
	var slot **Triage
	var parent, culprit gitrev.Commit
	for i := range r.Culprits {
		if c := &r.Culprits[i]; c.Triage == nil {
			slot, parent, culprit = &c.Triage, c.Parent, c.Commit
			break
		}
	}
	if main := &r.Ranges[0]; len(r.Culprits) == 0 && main.Culprit != nil && main.Triage == nil {
		slot, parent, culprit = &main.Triage, *main.Parent, *main.Culprit
	}
	if b.opt.Triage == nil || slot == nil {
		b.st.Phase = PhaseDone
		return nil
	}
	b.logf("triage: %s vs its parent %s", culprit.Short(), parent.Short())
	t, err := b.opt.Triage(ctx, parent, culprit)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		*slot = &Triage{Error: err.Error()}
		b.logf("triage failed: %v", err)
		return nil
	}
	*slot = t
	b.logf("triage: %s: %s", t.Verdict, t.Sentence)
	return nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}
