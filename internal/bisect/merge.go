// Merges: a first-parent culprit that is a merge is searched inside its
// merged side.

package bisect

import (
	"context"
	"fmt"

	"github.com/perfbot/perfbot/internal/gitrev"
)

// Graph is the commit graph around the first-parent history.
type Graph interface {
	// Parents returns a commit's parents, the first parent first.
	Parents(ctx context.Context, c gitrev.Commit) ([]gitrev.Commit, error)
	// MergeBase returns the best common ancestor of a and b.
	MergeBase(ctx context.Context, a, b gitrev.Commit) (gitrev.Commit, error)
	// FirstParentPath returns the first-parent commits after good up to
	// bad, oldest first.
	FirstParentPath(ctx context.Context, good, bad gitrev.Commit) ([]gitrev.Commit, error)
}

// GitGraph is the [Graph] of a git repository.
type GitGraph struct{ Repo *gitrev.Repo }

// Parents implements [Graph].
func (g GitGraph) Parents(ctx context.Context, c gitrev.Commit) ([]gitrev.Commit, error) {
	return g.Repo.Parents(ctx, c.Hash)
}

// MergeBase implements [Graph].
func (g GitGraph) MergeBase(ctx context.Context, a, b gitrev.Commit) (gitrev.Commit, error) {
	return g.Repo.MergeBase(ctx, a.Hash, b.Hash)
}

// FirstParentPath implements [Graph].
func (g GitGraph) FirstParentPath(ctx context.Context, good, bad gitrev.Commit) ([]gitrev.Commit, error) {
	return g.Repo.FirstParentPath(ctx, good.Hash, bad.Hash)
}

// isMerge reports whether c has more than one parent, from the Graph or,
// without one, a measurer that can tell.
func (b *bisector) isMerge(ctx context.Context, c gitrev.Commit) (bool, error) {
	if b.opt.Graph != nil {
		ps, err := b.opt.Graph.Parents(ctx, c)
		return len(ps) > 1, err
	}
	if m, ok := b.opt.Measurer.(interface {
		IsMerge(ctx context.Context, c gitrev.Commit) (bool, error)
	}); ok {
		return m.IsMerge(ctx, c)
	}
	return false, nil
}

// addMergeRange queues the inside of the merge culprit of range i: from
// merge-base(M^1, M^2) to M^2 on M^2's first-parent history. Its ends'
// comparison is the check that M^2 reproduces the change against that
// base. When the merged side cannot be searched, the merge's entry in
// Culprits says why.
func (b *bisector) addMergeRange(ctx context.Context, i int) error {
	r, g := &b.st.Result, b.opt.Graph
	m := *r.Ranges[i].Culprit
	note := func(s string) {
		if k := b.culpritIndex(m.Hash); k >= 0 {
			r.Culprits[k].Note = s
		}
		b.logf("merge %s: %s", m.Short(), s)
	}
	ps, err := g.Parents(ctx, m)
	if err != nil || len(ps) < 2 {
		return err
	}
	base, err := g.MergeBase(ctx, ps[0], ps[1])
	if err != nil {
		note(fmt.Sprintf("its merged side was not searched: %v", err))
		return nil
	}
	if base.Hash == ps[1].Hash {
		note(fmt.Sprintf("its second parent %s brings no commit that its first parent lacks: the merge's own changes are the culprit", ps[1].Short()))
		return nil
	}
	path, err := g.FirstParentPath(ctx, base, ps[1])
	if err != nil || len(path) == 0 {
		note(fmt.Sprintf("its merged side was not searched: no first-parent path from the merge base %s to %s: %v", base.Short(), ps[1].Short(), err))
		return nil
	}
	rangeNote := ""
	if fp, err := g.Parents(ctx, path[0]); err == nil && len(fp) > 0 && fp[0].Hash != base.Hash {
		// The side merged other history (the merge base is not on its
		// first-parent chain): search from where that chain forks.
		rangeNote = fmt.Sprintf("the merged side merged other history: searched from its fork point %s, not the merge base %s", fp[0].Short(), base.Short())
		base = fp[0]
	}
	idx := len(r.Ranges)
	r.Ranges = append(r.Ranges, Range{Kind: RangeMerge, Good: base, Bad: ps[1], Commits: len(path), Of: &m,
		Via: append(append([]gitrev.Commit(nil), r.Ranges[i].Via...), m), Path: idx, Span: [2]int{-1, len(path) - 1},
		Status: RangePending, Note: rangeNote})
	b.paths[idx] = path
	b.logf("merge %s: its merged side %s..%s (%d commits) will be searched", m.Short(), base.Short(), ps[1].Short(), len(path))
	return nil
}

// settleMerge, once the inside of a merge (range i) is done, says in the
// merge's entry in Culprits why it is still the culprit: its merged side
// does not reproduce the change (an interaction), or its search did not
// name a confirmed culprit. A culprit named inside has already taken the
// merge's place.
func (b *bisector) settleMerge(i int) {
	r := &b.st.Result
	rg := r.Ranges[i]
	if rg.Kind != RangeMerge || rg.Of == nil {
		return
	}
	k := b.culpritIndex(rg.Of.Hash)
	if k < 0 || !r.Culprits[k].Merge {
		return
	}
	c := &r.Culprits[k]
	change := ""
	if rg.Ends != nil {
		change = fmt.Sprintf("%+.1f%%, %s", rg.Ends.Change, rg.Ends.Decision)
	}
	side := fmt.Sprintf("its second parent %s against the merge base %s", rg.Bad.Short(), rg.Good.Short())
	switch rg.Status {
	case RangeSame, RangeSmall, RangeOtherWay:
		c.Interaction = true
		c.Note = fmt.Sprintf("%s does not reproduce the change (%s): neither side alone has it, so the merge itself is the culprit (an interaction of the two sides)", side, change)
	case RangeUndecided:
		c.Note = fmt.Sprintf("whether %s reproduces the change cannot be told (%s): the merge stays the culprit", side, change)
	case RangeUnconfirmed:
		c.Note = fmt.Sprintf("%s reproduces the change (%s), but the check did not confirm the commit found inside, %s", side, change, rg.Culprit.Short())
	case RangeSplit:
		c.Note = fmt.Sprintf("%s reproduces the change (%s); the merged side holds more than one change, and no culprit found in it was confirmed", side, change)
	case RangeCandidates:
		c.Note = fmt.Sprintf("%s reproduces the change (%s); skipped commits inside leave %d candidates", side, change, len(rg.Candidates))
	case RangeBudget, RangeFailed:
		c.Note = fmt.Sprintf("its merged side %s..%s was not searched to the end: %s", rg.Good.Short(), rg.Bad.Short(), rg.Note)
	}
}
