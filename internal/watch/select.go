package watch

import "github.com/perfbot/perfbot/internal/gitrev"

// selection is what one cycle measures on one branch of one job.
type selection struct {
	Ref gitrev.Commit   // the newest tested commit on the branch, re-measured beside the new ones; zero when none
	New []gitrev.Commit // the commits to test, oldest first
}

// choose picks a cycle's commits from a branch's first-parent list (oldest
// first) and the commits tested before: the untested commits after the
// newest tested one, thinned by the test policy and the cap (the head is
// always taken; what is skipped is left to bisection). A branch with
// nothing tested starts its history at its head. After a force-push or a
// rebase the newest tested commit still on the branch is the reference.
func choose(list []gitrev.Commit, tested map[string]bool, policy TestPolicy, maxCommits int) selection {
	var sel selection
	if len(list) == 0 {
		return sel
	}
	last := -1
	for i := len(list) - 1; i >= 0; i-- {
		if tested[list[i].Hash] {
			last = i
			break
		}
	}
	head := list[len(list)-1]
	if last < 0 {
		sel.New = []gitrev.Commit{head}
		return sel
	}
	sel.Ref = list[last]
	pending := list[last+1:]
	if len(pending) == 0 {
		return sel
	}
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
	sel.New = picked
	return sel
}
