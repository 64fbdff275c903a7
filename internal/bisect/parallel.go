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
	// A candidate that differs from both ends: the range holds two
	// changes and is searched as two ranges split at the first such one.
	for _, l := range looks {
		if l.step.Between {
			return b.split(l.step.Index)
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

// lookAt decides candidate position p, the i-th of k looked at
// together. Its runs and the runs of the ends it is compared with come
// from one machine: with a [PinningMeasurer] the calls of slot i stay on
// one machine from step to step, and the ends' runs that machine took
// before (for any candidate) are reused; fresh runs of the ends are taken
// beside the candidate's only up to what the test needs, in a window of
// run numbers of slot i's own, so that concurrent looks never take the
// same run. An undecided look is followed by one with twice the runs.
func (b *bisector) lookAt(ctx context.Context, p, i, k int, from [2]int) look {
	rg := b.rg()
	cand := b.path[p]
	var l look
	l.step = Step{Index: p, Commit: cand, Remaining: b.st.Hi - b.st.Lo, Range: b.st.Range}
	s := &l.step
	// The pin names the slot only: a slot keeps its machine when fewer
	// candidates remain.
	key := fmt.Sprintf("bisect slot %d", i+1)
	measureOn := func(reqs []Request) (*Batch, error) {
		if pm, ok := b.opt.Measurer.(PinningMeasurer); ok {
			return pm.MeasureOn(ctx, key, reqs)
		}
		return b.opt.Measurer.Measure(ctx, reqs)
	}
	// What is stored: the candidate's runs and the ends' (all machines).
	batch, err := measureOn([]Request{{Commit: cand}, {Commit: rg.Good}, {Commit: rg.Bad}})
	if err != nil {
		l.err = err
		return l
	}
	l.built += batch.Built
	cf := batch.Samples[0].maxIndex()
	machine := b.slotMachine(i)
	stride := b.opt.MaxRuns + MinRuns(b.opt.Alpha, 1)
	win := [2]int{from[0] + i*stride, from[1] + i*stride}
	fresh := [2]int{}
	n := b.opt.StepRuns
	for {
		m := max(MinRuns(b.opt.Alpha, n), n)
		reqs := []Request{{Commit: cand, From: cf, Runs: cf + n}, {Commit: rg.Good}, {Commit: rg.Bad}}
		for e := range 2 {
			// Fresh runs of the end in this slot's window: as many as its
			// runs on the slot's machine (outside the window) lack.
			// At least as many as the candidate's, so that every look
			// compares with runs of the ends taken beside its own.
			fresh[e] = min(max(fresh[e], n, m-batch.Samples[1+e].onMachine(machine, win[e], win[e]+stride)), stride)
			reqs[1+e].From, reqs[1+e].Runs = win[e], win[e]+fresh[e]
		}
		batch, err = measureOn(reqs)
		if batch != nil {
			l.taken += batch.Taken
			l.built += batch.Built
		}
		if err != nil {
			l.err = err
			return l
		}
		// The candidate's runs of the machine that took the latest ones:
		// when the slot's machine died between doublings, its earlier
		// runs are not mixed with the new machine's.
		c := batch.Samples[0].window(cf, cf+n)
		if mc := c.latestMachine(); mc != machine {
			machine = mc
			b.setSlotMachine(i, mc)
		}
		c = c.of(machine)
		good := batch.Samples[1].of(machine)
		bad := batch.Samples[2].of(machine)
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
		// Differs from both ends toward each other: the range holds more
		// than one change (parallelStep splits it, as a step does).
		s.Between = note != "" && verdict == Bad && b.opt.MaxCulprits > 1
		where := ""
		if machine != "" {
			where = " on " + machine
		}
		if verdict != "" {
			s.Verdict, s.Reason, s.Note = verdict, reason, note
			s.Reason += fmt.Sprintf(" (against %d and %d runs of the ends%s)", good.runs(), bad.runs(), where)
			return l
		}
		if n >= b.opt.MaxRuns {
			s.Verdict, s.Guessed = near, true
			s.Reason = fmt.Sprintf("undecided after %d runs%s (vs good: %s; vs bad: %s); placed with the nearer end", s.Runs, where, vg.Reason, vb.Reason)
			return l
		}
		n = min(2*n, b.opt.MaxRuns)
	}
}

// slotMachine is the machine that took slot i's last look ("" unknown).
func (b *bisector) slotMachine(i int) string {
	b.slotMu.Lock()
	defer b.slotMu.Unlock()
	return b.slots[i]
}

func (b *bisector) setSlotMachine(i int, m string) {
	b.slotMu.Lock()
	defer b.slotMu.Unlock()
	if b.slots == nil {
		b.slots = map[int]string{}
	}
	b.slots[i] = m
}

// latestMachine is the machine of the run with the highest run number
// ("" when none or unknown).
func (s Samples) latestMachine() string {
	m, top := "", 0
	for _, l := range s.Layouts {
		for _, v := range l {
			if v.Index > top {
				m, top = v.Machine, v.Index
			}
		}
	}
	return m
}

// of keeps the runs taken on machine.
func (s Samples) of(machine string) Samples {
	out := Samples{BuildErr: s.BuildErr}
	for _, l := range s.Layouts {
		out.Layouts = append(out.Layouts, slices.DeleteFunc(slices.Clone(l), func(v Value) bool { return v.Machine != machine }))
	}
	return out
}

// onMachine counts the OK runs (of the layout with the fewest) taken on
// machine outside the run numbers lo+1..hi.
func (s Samples) onMachine(machine string, lo, hi int) int {
	n := -1
	for _, l := range s.Layouts {
		c := 0
		for _, v := range l {
			if v.OK && v.Machine == machine && (v.Index <= lo || v.Index > hi) {
				c++
			}
		}
		if n < 0 || c < n {
			n = c
		}
	}
	return max(n, 0)
}

// window keeps the runs numbered from+1..to.
func (s Samples) window(from, to int) Samples {
	out := Samples{BuildErr: s.BuildErr}
	for _, l := range s.Layouts {
		out.Layouts = append(out.Layouts, slices.DeleteFunc(slices.Clone(l), func(v Value) bool { return v.Index <= from || v.Index > to }))
	}
	return out
}
