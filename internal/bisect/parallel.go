// The k-ary search: several candidates of a range measured at once.

package bisect

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// candidates returns up to k untested, unskipped positions of (lo, hi),
// spread evenly: the i-th nearest to lo + i*(hi-lo)/(k+1).
func (b *bisector) candidates(lo, hi, k int) []int {
	skipped := map[int]bool{}
	for _, s := range b.st.Result.Steps {
		if s.Verdict == Skip && b.samePath(s.Range) {
			skipped[s.Index] = true
		}
	}
	var free []int
	for i := lo + 1; i < hi; i++ {
		if !skipped[i] {
			free = append(free, i)
		}
	}
	if len(free) <= k {
		return free
	}
	var out []int
	for i := 1; i <= k; i++ {
		p := free[(i*len(free))/(k+1)]
		if len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	return out
}

// look is one parallel candidate's measurement so far.
type look struct {
	step  Step
	err   error
	taken int
	built int
}

// parallelStep measures Parallel candidates of the range at once and
// narrows the range to the stretch between the last candidate on the good
// side and the first on the bad side.
func (b *bisector) parallelStep(ctx context.Context) error {
	st, r := b.st, &b.st.Result
	pos := b.candidates(st.Lo, st.Hi, b.opt.Parallel)
	rg := b.rg()
	// Every look takes fresh runs of both ends in a window of run numbers
	// of its own, so that concurrent looks never take the same run.
	base, err := b.measure(ctx, []Request{{Commit: rg.Good}, {Commit: rg.Bad}})
	if err != nil {
		return err
	}
	from := [2]int{base[0].maxIndex(), base[1].maxIndex()}
	b.logf("step %d: testing %d commits at once (%d commits left)", len(r.Steps)+1, len(pos), st.Hi-st.Lo)
	looks := make([]look, len(pos))
	var wg sync.WaitGroup
	for i, p := range pos {
		wg.Go(func() {
			looks[i] = b.lookAt(ctx, p, i, len(pos), from)
		})
	}
	wg.Wait()
	for _, l := range looks {
		r.Runs += l.taken
		rg.Runs += l.taken
		r.Builds += l.built
	}
	for _, l := range looks {
		if l.err != nil {
			return l.err
		}
	}
	lo, hi := st.Lo, st.Hi
	for _, l := range looks {
		s := l.step
		s.N = len(r.Steps) + 1
		r.Steps = append(r.Steps, s)
		b.st.Used[s.Commit.Hash] = max(b.st.Used[s.Commit.Hash], s.Runs)
		b.logf("step %d: %s is %s: %s%s", s.N, s.Commit.Short(), s.Verdict, s.Reason, noteSuffix(s.Note))
		switch {
		case s.Verdict == Skip && strings.HasPrefix(s.Reason, "build failed"):
			r.BuildFailures++
		case s.Verdict == Bad && s.Index < hi:
			hi = s.Index
		}
	}
	for _, l := range looks {
		if l.step.Verdict == Good && l.step.Index < hi && l.step.Index > lo {
			lo = l.step.Index
		}
	}
	st.Lo, st.Hi = lo, hi
	return nil
}

// lookAt decides candidate position p (the i-th of k looked at together):
// each look takes n fresh runs of the candidate and as many of each end
// as the test needs, in one Measure call, and compares them with each
// other only; an undecided look is followed by one with twice the runs.
func (b *bisector) lookAt(ctx context.Context, p, i, k int, from [2]int) look {
	rg := b.rg()
	cand := b.path[p]
	var l look
	l.step = Step{Index: p, Commit: cand, Remaining: b.st.Hi - b.st.Lo, Range: b.st.Range}
	s := &l.step
	n := b.opt.StepRuns
	candFrom := -1
	stride := b.opt.MaxRuns + MinRuns(b.opt.Alpha, 1)
	for round := 0; ; round++ {
		m := max(MinRuns(b.opt.Alpha, n), n)
		win := (round*k + i) * stride
		reqs := []Request{{Commit: cand}, {Commit: rg.Good, From: from[0] + win, Runs: from[0] + win + m},
			{Commit: rg.Bad, From: from[1] + win, Runs: from[1] + win + m}}
		if candFrom < 0 {
			// The candidate's own runs: after whatever it has stored.
			batch, err := b.opt.Measurer.Measure(ctx, []Request{{Commit: cand}})
			if err != nil {
				l.err = err
				return l
			}
			l.built += batch.Built
			candFrom = batch.Samples[0].maxIndex()
		}
		cf := candFrom + round*b.opt.MaxRuns
		reqs[0].From, reqs[0].Runs = cf, cf+n
		batch, err := b.opt.Measurer.Measure(ctx, reqs)
		if batch != nil {
			l.taken += batch.Taken
			l.built += batch.Built
		}
		if err != nil {
			l.err = err
			return l
		}
		c := batch.Samples[0].window(cf, cf+n)
		good := batch.Samples[1].window(reqs[1].From, reqs[1].Runs)
		bad := batch.Samples[2].window(reqs[2].From, reqs[2].Runs)
		s.Runs = c.runs()
		if c.BuildErr != nil {
			s.Verdict, s.Reason = Skip, firstLine(c.BuildErr.Error())
			return l
		}
		if f := c.failure(); f != "" {
			s.Verdict, s.Reason = Skip, f
			return l
		}
		vg := b.compare(good, c, b.opt.StepRuns)
		vb := b.compare(bad, c, b.opt.StepRuns)
		s.VsGood, s.VsBad = &vg, &vb
		near := b.nearerTo(c, good, bad)
		verdict, reason, note := b.evidence(vg, vb, near)
		if verdict != "" {
			s.Verdict, s.Reason, s.Note = verdict, reason, note
			s.Reason += fmt.Sprintf(" (against %d runs of each end taken with it)", m)
			return l
		}
		if n >= b.opt.MaxRuns {
			s.Verdict, s.Guessed = near, true
			s.Reason = fmt.Sprintf("undecided after %d runs (vs good: %s; vs bad: %s); placed with the nearer end", s.Runs, vg.Reason, vb.Reason)
			return l
		}
		n = min(2*n, b.opt.MaxRuns)
	}
}

// window keeps the runs numbered from+1..to.
func (s Samples) window(from, to int) Samples {
	out := Samples{BuildErr: s.BuildErr}
	for _, l := range s.Layouts {
		out.Layouts = append(out.Layouts, slices.DeleteFunc(slices.Clone(l), func(v Value) bool { return v.Index <= from || v.Index > to }))
	}
	return out
}
