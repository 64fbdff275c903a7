package watch

import (
	"slices"

	"github.com/perfbot/perfbot/internal/gitrev"
)

// selection is what one cycle measures on one branch of one job.
type selection struct {
	Ref gitrev.Commit   // the newest tested commit with successful runs on the branch, re-measured beside the new ones; zero when none
	New []gitrev.Commit // the commits to test, oldest first
}

// known is what watch knows of a history's commits before a cycle.
type known struct {
	// tested are the commits tested; ok says whether one had successful
	// runs (only such a commit is a reference: a step needs its runs).
	tested map[string]bool
	ok     func(hash string) bool
	err    *error // set when ok could not read the store
	// broken are the commits whose build failed, true once the failure
	// is final (it failed again when built once more); a commit whose
	// first build failed is chosen again, to be built once more.
	broken map[string]bool
}

func (k known) done(h string) bool { return k.tested[h] || k.broken[h] }

// frontier returns the position in cs of the newest commit tested or
// given up on (-1: none), and of the newest tested one with successful
// runs at or before it (-1: none), the reference.
func (k known) frontier(cs []gitrev.Commit) (last, ref int) {
	last, ref = -1, -1
	for i := len(cs) - 1; i >= 0 && ref < 0; i-- {
		h := cs[i].Hash
		if last < 0 && k.done(h) {
			last = i
		}
		if last >= 0 && k.tested[h] && (k.ok == nil || k.ok(h)) {
			ref = i
		}
	}
	return last, ref
}

// withRetries adds to picked the commits of cs whose first build failed
// (to be built once more), unless picked has them.
func (k known) withRetries(picked, cs []gitrev.Commit) []gitrev.Commit {
	for _, c := range cs {
		if final, ok := k.broken[c.Hash]; ok && !final && !k.tested[c.Hash] &&
			!slices.ContainsFunc(picked, func(p gitrev.Commit) bool { return p.Hash == c.Hash }) {
			picked = append(picked, c)
		}
	}
	return picked
}

// choose picks a cycle's commits from a branch's first-parent list (oldest
// first): the untested commits after the newest commit tested or given up
// on (a build that failed for good), thinned by the test policy and the
// cap (the head is always taken; what is skipped is left to bisection),
// and every commit after the reference whose first build failed (built
// once more). The reference is the newest tested commit with successful
// runs: a commit that does not build is passed over, never a reference,
// so the step from the last commit that built to the next one that does
// is measured in one session. A branch with nothing tested starts its
// history at its head. After a force-push or a rebase the newest tested
// commit still on the branch is the reference.
func choose(list []gitrev.Commit, k known, policy TestPolicy, maxCommits int) selection {
	var sel selection
	if len(list) == 0 {
		return sel
	}
	last, ref := k.frontier(list)
	head := list[len(list)-1]
	if last < 0 {
		sel.New = []gitrev.Commit{head}
		return sel
	}
	if ref >= 0 {
		sel.Ref = list[ref]
	}
	// First failures after the reference are built once more, whatever
	// the policy: a full disk or a killed compiler leaves no hole.
	picked := k.withRetries(pick(list[last+1:], policy, maxCommits), list[ref+1:])
	sortByList(picked, list)
	sel.New = picked
	return sel
}

// sortByList sorts commits in the order of list (oldest first).
func sortByList(commits, list []gitrev.Commit) {
	pos := make(map[string]int, len(list))
	for i, c := range list {
		pos[c.Hash] = i
	}
	slices.SortFunc(commits, func(a, b gitrev.Commit) int { return pos[a.Hash] - pos[b.Hash] })
}

// pick thins the pending commits (oldest first) by the test policy and the
// cap; the newest is always taken.
func pick(pending []gitrev.Commit, policy TestPolicy, maxCommits int) []gitrev.Commit {
	if len(pending) == 0 {
		return nil
	}
	head := pending[len(pending)-1]
	var picked []gitrev.Commit
	switch {
	case policy.Heads:
		picked = []gitrev.Commit{head}
	default:
		every := max(policy.Every, 1)
		for i := every - 1; i < len(pending); i += every {
			picked = append(picked, pending[i])
		}
		if picked == nil || picked[len(picked)-1].Hash != head.Hash {
			picked = append(picked, head)
		}
	}
	if maxCommits > 0 && len(picked) > maxCommits {
		// Thin evenly, the newest kept.
		thin := make([]gitrev.Commit, 0, maxCommits)
		for k := 1; k <= maxCommits; k++ {
			thin = append(thin, picked[k*len(picked)/maxCommits-1])
		}
		picked = thin
	}
	return picked
}

// olderRetries are the commits whose first build failed that lie before
// ref (the commits after them were tested in the cycle the build failed
// in), each to be built once more beside the newest commit before it
// with successful runs: its step is then measured against its
// neighbour, as every other.
func olderRetries(list []gitrev.Commit, k known, ref gitrev.Commit) []selection {
	var out []selection
	var prev gitrev.Commit
	for _, c := range list {
		if c.Hash == ref.Hash {
			break
		}
		if final, ok := k.broken[c.Hash]; ok && !final && !k.tested[c.Hash] {
			out = append(out, selection{Ref: prev, New: []gitrev.Commit{c}})
		}
		if k.tested[c.Hash] && (k.ok == nil || k.ok(c.Hash)) {
			prev = c
		}
	}
	return out
}
