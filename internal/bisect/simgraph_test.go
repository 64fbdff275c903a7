package bisect

import (
	"context"
	"fmt"
	"math"

	"github.com/perfbot/perfbot/internal/gitrev"
)

// Simulated histories with merged branches, and their commit graph.

// addMerge makes path[at] the merge of a side branch of n commits forked
// from path position fork (-1: the good commit). side[j] is the log change
// of side commit j; inter is the change the merge itself adds beyond what
// the branch brings (an interaction of the two sides). The path's figures
// from the merge on move by the branch's changes plus inter. It returns the
// branch's commits, oldest first.
func (h *simHistory) addMerge(at, fork, n int, side map[int]float64, inter float64) []gitrev.Commit {
	if h.side == nil {
		h.side, h.parents = map[string]int{}, map[string][]gitrev.Commit{}
	}
	base := fork + 1 // position of the fork commit
	lvl, total := h.level[base], inter
	var cs []gitrev.Commit
	parent := h.commitAt(fork)
	for j := range n {
		c := gitrev.Commit{Hash: fmt.Sprintf("%08x%032x", at+1, len(h.level)), Subject: fmt.Sprintf("side %d of merge %d", j, at)}
		lvl += side[j]
		total += side[j]
		h.side[c.Hash] = len(h.level)
		h.level, h.shift = append(h.level, lvl), append(h.shift, h.shift[base])
		h.parents[c.Hash] = []gitrev.Commit{parent}
		cs = append(cs, c)
		parent = c
	}
	for p := at + 1; p <= len(h.path); p++ {
		h.level[p] += total
	}
	m := &h.path[at]
	m.Subject = fmt.Sprintf("Merge branch of %d commits", n)
	h.parents[m.Hash] = []gitrev.Commit{h.commitAt(at - 1), parent}
	return cs
}

// commitAt is path[i], or the good commit for -1.
func (h *simHistory) commitAt(i int) gitrev.Commit {
	if i < 0 {
		return h.good
	}
	return h.path[i]
}

// simGraph is the commit graph of a simHistory: the path's commits have
// their predecessor as first parent, merges (addMerge) a second one.
type simGraph struct{ h *simHistory }

func (g simGraph) Parents(ctx context.Context, c gitrev.Commit) ([]gitrev.Commit, error) {
	if ps, ok := g.h.parents[c.Hash]; ok {
		return ps, nil
	}
	if c.Hash == g.h.good.Hash {
		return nil, nil
	}
	p := g.h.pos(c.Hash) // panics on unknown commits
	return []gitrev.Commit{g.h.commitAt(p - 2)}, nil
}

// ancestors returns c and its ancestors, nearest first (breadth first).
func (g simGraph) ancestors(c gitrev.Commit) []gitrev.Commit {
	seen := map[string]bool{c.Hash: true}
	out := []gitrev.Commit{c}
	for i := 0; i < len(out); i++ {
		ps, _ := g.Parents(context.Background(), out[i])
		for _, p := range ps {
			if !seen[p.Hash] {
				seen[p.Hash] = true
				out = append(out, p)
			}
		}
	}
	return out
}

func (g simGraph) MergeBase(ctx context.Context, a, b gitrev.Commit) (gitrev.Commit, error) {
	of := map[string]bool{}
	for _, c := range g.ancestors(a) {
		of[c.Hash] = true
	}
	for _, c := range g.ancestors(b) {
		if of[c.Hash] {
			return c, nil
		}
	}
	return gitrev.Commit{}, fmt.Errorf("no common ancestor of %s and %s", a.Short(), b.Short())
}

func (g simGraph) FirstParentPath(ctx context.Context, good, bad gitrev.Commit) ([]gitrev.Commit, error) {
	var out []gitrev.Commit
	for c := bad; c.Hash != good.Hash; {
		out = append([]gitrev.Commit{c}, out...)
		ps, _ := g.Parents(ctx, c)
		if len(ps) == 0 {
			return nil, fmt.Errorf("%s is not a first-parent ancestor of %s", good.Short(), bad.Short())
		}
		c = ps[0]
	}
	return out, nil
}

// levelOf is the true log figure of a commit (for tests' expectations).
func (h *simHistory) levelOf(c gitrev.Commit) float64 { return h.level[h.pos(c.Hash)] }

// within reports whether the interval of c holds the log change want
// (with 3 points of percent to spare for the drift).
func within(c Comparison, want float64) bool {
	w := 100 * math.Expm1(want)
	return c.Lo-3 <= w && w <= c.Hi+3
}
