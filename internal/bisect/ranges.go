// Every culprit: the ranges a culprit leaves, their ends, the budget, and
// the Result fields that show the first culprit.

package bisect

import (
	"context"
	"fmt"
	"slices"

	"github.com/perfbot/perfbot/internal/gitrev"
)

// rg is the range being searched.
func (b *bisector) rg() *Range { return &b.st.Result.Ranges[b.st.Range] }

// at is the commit at position i of the current path (-1: its good end).
func (b *bisector) at(i int) gitrev.Commit {
	if i < 0 {
		return b.good
	}
	return b.path[i]
}

// samePath reports whether range i's commits lie on the current path.
func (b *bisector) samePath(i int) bool {
	r := &b.st.Result
	if i == b.st.Range || i >= len(r.Ranges) || b.st.Range >= len(r.Ranges) {
		return i == b.st.Range
	}
	return r.Ranges[i].Path == b.rg().Path
}

// rangeName describes range i for the log.
func (b *bisector) rangeName(i int) string {
	rg := b.st.Result.Ranges[i]
	ends := fmt.Sprintf("%s..%s, %d commits", rg.Good.Short(), rg.Bad.Short(), rg.Commits)
	of := "the candidates"
	if rg.Of != nil {
		of = rg.Of.Short()
	}
	switch rg.Kind {
	case RangeBefore, RangeAfter:
		return fmt.Sprintf("%s %s: %s", rg.Kind, of, ends)
	case RangeMerge:
		return fmt.Sprintf("inside merge %s: %s", of, ends)
	}
	return ends
}

// rangeSuffix is " in range N" for a range other than the main one.
func (b *bisector) rangeSuffix() string {
	if b.st.Range == 0 {
		return ""
	}
	return fmt.Sprintf(" in range %d", b.st.Range+1)
}

// enter makes the current range's path the one steps are taken on.
func (b *bisector) enter(ctx context.Context) error {
	rg := b.rg()
	p, err := b.pathOf(ctx, rg.Path)
	if err != nil {
		return err
	}
	b.path, b.good = p, b.st.Result.Ranges[rg.Path].Good
	b.ends = [2]Samples{}
	return nil
}

// pathOf returns the first-parent path of the range that owns one: the
// main range's was given; a merge range's comes from the Graph.
func (b *bisector) pathOf(ctx context.Context, owner int) ([]gitrev.Commit, error) {
	if p, ok := b.paths[owner]; ok {
		return p, nil
	}
	o := b.st.Result.Ranges[owner]
	if b.opt.Graph == nil {
		return nil, fmt.Errorf("bisect: the saved state searches inside the merge %s, which needs the commit graph", o.Of.Short())
	}
	p, err := b.opt.Graph.FirstParentPath(ctx, o.Good, o.Bad)
	if err != nil {
		return nil, err
	}
	if len(p) != o.Commits {
		return nil, fmt.Errorf("bisect: the saved state has %d commits from %s to %s; git now has %d", o.Commits, o.Good.Short(), o.Bad.Short(), len(p))
	}
	b.paths[owner] = p
	return p, nil
}

// next ends the current range's search (see finishRange) and starts the
// first pending range the budget allows; with none left, triage.
func (b *bisector) next(ctx context.Context) error {
	st, r := b.st, &b.st.Result
	if err := b.finishRange(ctx); err != nil {
		return err
	}
	for i := range r.Ranges {
		rg := &r.Ranges[i]
		if rg.Status != RangePending {
			continue
		}
		if why := b.overBudget(rg); why != "" {
			rg.Status, rg.Note = RangeBudget, "not searched: "+why
			b.logf("range %d (%s): %s", i+1, b.rangeName(i), rg.Note)
			b.settleMerge(i)
			continue
		}
		// The path first: an error leaves the state as it was.
		if _, err := b.pathOf(ctx, rg.Path); err != nil {
			return err
		}
		st.Range = i
		rg.Status = RangeSearching
		if err := b.enter(ctx); err != nil {
			return err
		}
		st.Lo, st.Hi = rg.Span[0], rg.Span[1]
		st.Retests, st.CheckFrom = 0, [2]int{}
		st.Phase = PhaseEnds
		b.logf("range %d of %d: %s", i+1, len(r.Ranges), b.rangeName(i))
		return nil
	}
	st.Phase = PhaseTriage
	return nil
}

// finishRange records how the current range's search ended: a confirmed
// culprit joins Culprits, and the ranges it leaves (and the inside of a
// merge) are queued. It does nothing more to a range already finished.
func (b *bisector) finishRange(ctx context.Context) error {
	st, r := b.st, &b.st.Result
	i := st.Range
	if rg := &r.Ranges[i]; rg.Status == RangeSearching {
		switch {
		case rg.Culprit != nil && (b.opt.Fixed > 0 || rg.Check != nil && rg.Check.Confirmed):
			rg.Status = RangeCulprit
			c := Culprit{Commit: *rg.Culprit, Parent: *rg.Parent, Check: rg.Check, Range: i, Merge: rg.Merge, Via: rg.Via}
			if rg.Check != nil {
				c.Change = rg.Check.Comparison.Change
			}
			b.addCulprit(c)
			if rg.Merge && !b.opt.FirstParentOnly && b.opt.Graph != nil {
				if err := b.addMergeRange(ctx, i); err != nil {
					return err
				}
			}
			of := *r.Ranges[i].Culprit
			b.addSides(i, st.Lo, st.Hi, &of)
		case rg.Culprit != nil:
			rg.Status = RangeUnconfirmed
		case len(rg.Candidates) > 0:
			rg.Status = RangeCandidates
			b.addSides(i, st.Lo, st.Hi, nil)
		default:
			rg.Status = RangeFailed
		}
	}
	b.settleMerge(i)
	return nil
}

// addCulprit adds c to Culprits; one found inside a merge takes the place
// of that merge's entry, the first time.
func (b *bisector) addCulprit(c Culprit) {
	r := &b.st.Result
	if n := len(c.Via); n > 0 {
		if k := b.culpritIndex(c.Via[n-1].Hash); k >= 0 && r.Culprits[k].Merge {
			r.Culprits[k] = c
			return
		}
	}
	if len(r.Culprits) == 0 {
		r.FirstRuns = r.Runs
	}
	r.Culprits = append(r.Culprits, c)
}

func (b *bisector) culpritIndex(hash string) int {
	for k, c := range b.st.Result.Culprits {
		if c.Commit.Hash == hash {
			return k
		}
	}
	return -1
}

// addSides queues the ranges that the culprit bracket (lo, hi] of range i
// leaves: from its good end to lo, and from hi to its bad end.
func (b *bisector) addSides(i, lo, hi int, of *gitrev.Commit) {
	r := &b.st.Result
	rg := r.Ranges[i]
	if b.opt.MaxCulprits <= 1 {
		return
	}
	side := Range{Of: of, Via: rg.Via, Path: rg.Path, Status: RangePending}
	if lo > rg.Span[0] {
		s := side
		s.Kind, s.Good, s.Bad, s.Commits, s.Span = RangeBefore, rg.Good, b.at(lo), lo-rg.Span[0], [2]int{rg.Span[0], lo}
		r.Ranges = append(r.Ranges, s)
	}
	if hi < rg.Span[1] {
		s := side
		s.Kind, s.Good, s.Bad, s.Commits, s.Span = RangeAfter, b.at(hi), rg.Bad, rg.Span[1]-hi, [2]int{hi, rg.Span[1]}
		r.Ranges = append(r.Ranges, s)
	}
}

// overBudget says why range rg may not start ("" when it may): the most
// culprits are named, or the extra runs are spent. The inside of a merge
// culprit is searched whatever the budget: a culprit found there takes the
// merge's place.
func (b *bisector) overBudget(rg *Range) string {
	r := &b.st.Result
	if rg.Kind == RangeMerge {
		return ""
	}
	if len(r.Culprits) >= b.opt.MaxCulprits {
		return fmt.Sprintf("%d culprits named, the most the budget allows (%d)", len(r.Culprits), b.opt.MaxCulprits)
	}
	return b.runsSpent()
}

// runsSpent says, once ExtraRuns is set and spent, so.
func (b *bisector) runsSpent() string {
	if n := b.st.Result.ExtraRuns(); b.opt.ExtraRuns > 0 && n >= b.opt.ExtraRuns {
		return fmt.Sprintf("the budget of %d extra runs is spent (%d taken after the first culprit)", b.opt.ExtraRuns, n)
	}
	return ""
}

// reopen, on resuming, puts back in the queue the ranges the budget left
// unsearched when the budget given now allows them.
func (b *bisector) reopen() {
	st, r := b.st, &b.st.Result
	reopened := false
	for i := range r.Ranges {
		rg := &r.Ranges[i]
		if rg.Status == RangeBudget && b.overBudget(rg) == "" {
			rg.Status, rg.Note = RangePending, ""
			reopened = true
		}
	}
	if reopened && (st.Phase == PhaseTriage || st.Phase == PhaseDone) {
		st.Phase = PhaseNext
	}
}

// sync makes Result's single-culprit fields show the first culprit (or,
// without a confirmed one, the main range's search).
func (b *bisector) sync() {
	r := &b.st.Result
	if len(r.Ranges) == 0 {
		return
	}
	main := r.Ranges[0]
	r.Ends, r.EndsRuns, r.Candidates = main.Ends, main.EndsRuns, main.Candidates
	if len(r.Culprits) > 0 {
		c := r.Culprits[0]
		commit, parent := c.Commit, c.Parent
		r.Culprit, r.Parent, r.Check, r.Merge, r.Triage = &commit, &parent, c.Check, c.Merge, c.Triage
		return
	}
	r.Culprit, r.Parent, r.Check, r.Merge, r.Triage = main.Culprit, main.Parent, main.Check, main.Merge, main.Triage
}

// migrateV1 turns a version-1 state (one range, one culprit) into the
// current one: its search is the main range's. One still running goes on
// and then searches for more culprits; a finished one stays finished.
func migrateV1(st *State) {
	r := &st.Result
	main := Range{Kind: RangeMain, Good: r.Good, Bad: r.Bad, Commits: r.Commits, Span: [2]int{-1, r.Commits - 1},
		Status: RangeSearching, Ends: r.Ends, EndsRuns: r.EndsRuns, Culprit: r.Culprit, Parent: r.Parent, Merge: r.Merge,
		Candidates: slices.Clone(r.Candidates), Check: r.Check, Runs: r.Runs, CheckRuns: r.CheckRuns}
	switch st.Phase {
	case PhaseTriage:
		st.Phase = PhaseNext
	case PhaseDone:
		switch {
		case r.Found():
			main.Status = RangeCulprit
			c := Culprit{Commit: *r.Culprit, Parent: *r.Parent, Check: r.Check, Merge: r.Merge, Triage: r.Triage}
			if r.Check != nil {
				c.Change = r.Check.Comparison.Change
			}
			r.Culprits, r.FirstRuns = []Culprit{c}, r.Runs
		case r.Culprit != nil:
			main.Status, main.Triage = RangeUnconfirmed, r.Triage
		case len(r.Candidates) > 0:
			main.Status = RangeCandidates
		}
		r.Notes = append(r.Notes, "bisected by an earlier perfbot, which looked for one culprit and not inside merges; --restart searches again for every culprit (the stored runs are reused)")
	}
	r.Ranges = []Range{main}
	st.Range, st.Version = 0, StateVersion
}

// split ends the current range at position m, a commit that differs from
// both ends toward each other: part of the change is at or before it and
// part after, so the range is searched as two, from its good end to m and
// from m to its bad end, each with m as an end. (Placing m on either side
// and going on would need every later commit between the changes to go
// the same way, which a nearer-end rule cannot promise when m lies near the
// middle.) Both are queued like the ranges a culprit leaves.
func (b *bisector) split(m int) error {
	st, rg := b.st, b.rg()
	at := b.path[m]
	rg.Status = RangeSplit
	rg.Note = fmt.Sprintf("%s differs from both ends: the range holds more than one change, searched as two ranges split there", at.Short())
	rg.Culprit, rg.Parent, rg.Check, rg.Merge = nil, nil, nil, false
	b.logf("range %d: %s", st.Range+1, rg.Note)
	n := len(b.st.Result.Ranges)
	b.addSides(st.Range, m, m, &at)
	for i := n; i < len(b.st.Result.Ranges); i++ {
		b.st.Result.Ranges[i].Split = true
	}
	st.Phase = PhaseNext
	return nil
}
