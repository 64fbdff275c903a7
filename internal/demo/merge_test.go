package demo

import (
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// TestBisectMergeHistory: main's first-parent history holds the alignment
// shift and the merge of the topic branch, which forks from an earlier main
// commit and holds the real regression; the merge brings the branch's
// changes and nothing else; the branch's other commits edit notes only.
func TestBisectMergeHistory(t *testing.T) {
	testutil.NeedTool(t, "git")
	r := create(t, Options{History: HistoryBisectMerge, Seed: 5})
	checkCommits(t, r)
	var main, topic []Commit
	for _, c := range r.Commits {
		switch c.Branch {
		case "main":
			main = append(main, c)
		case "topic":
			topic = append(topic, c)
		default:
			t.Errorf("commit %s on branch %q", c.Label, c.Branch)
		}
	}
	if len(main) != DefaultMergeCommits || len(topic) != DefaultMergeCommits/3 {
		t.Fatalf("%d main and %d topic commits, want %d and %d", len(main), len(topic), DefaultMergeCommits, DefaultMergeCommits/3)
	}
	if fp := firstParents(t, r.Dir); !slices.Equal(fp, hashes(main)) {
		t.Errorf("main's first-parent history differs from the main commits")
	}
	if last := r.Commits[len(r.Commits)-1]; last.Branch != "main" || git(t, r.Dir, "rev-parse", "HEAD") != last.Hash {
		t.Errorf("the last commit %s is not main's head", last.Label)
	}
	m, real, text := r.ByLabel("merge"), r.ByLabel(EffectRealRegression), r.ByLabel(EffectTextAlignment)
	if m.Effect != EffectMerge || m.Merged != topic[len(topic)-1].Hash || m.Branch != "main" {
		t.Fatalf("merge %+v: want a main commit whose second parent is the topic's tip", m)
	}
	if real.Branch != "topic" || text.Branch != "main" {
		t.Errorf("real regression on %s, text alignment on %s; want topic and main", real.Branch, text.Branch)
	}
	fork := git(t, r.Dir, "merge-base", m.Parent, m.Merged)
	if fork != topic[0].Parent || fork == m.Parent {
		t.Errorf("merge base %s, want the topic's fork point %s, before the merge's first parent", fork, topic[0].Parent)
	}
	// The merge brings the branch's changes: the real regression's code and
	// the branch's notes; the real regression changes bench.c only.
	if got := git(t, r.Dir, "diff", "--name-only", m.Parent, m.Hash); got != "NOTES.md\nbench.c" {
		t.Errorf("the merge changes %q against its first parent", got)
	}
	if got := git(t, r.Dir, "diff", m.Merged, m.Hash, "--", "bench.c"); strings.Contains(got, "text_kernel(text_input, N * 3 / 10)") {
		t.Errorf("the merge's bench.c differs from the branch's in the real regression's call:\n%s", got)
	}
	if got := git(t, r.Dir, "diff", "--name-only", real.Parent, real.Hash); got != "bench.c" {
		t.Errorf("the real regression changes %q", got)
	}
	for _, c := range topic {
		if c.Effect == EffectNoChange {
			if got := git(t, r.Dir, "diff", "--name-only", c.Parent, c.Hash); got != "NOTES.md" {
				t.Errorf("quiet topic commit %s changes %q", c.Label, got)
			}
		}
	}
	checkJobFile(t, r)
}

// TestBisectMergePlans: the special commits' places over many seeds and
// lengths, without git.
func TestBisectMergePlans(t *testing.T) {
	for _, n := range []int{8, 9, 24, 100} {
		for seed := range uint64(40) {
			steps := planBisectMerge(n, seed, DefaultPlacement)
			count, onMain := map[string]int{}, 0
			for i, s := range steps {
				count[s.effect]++
				if s.ref == "" {
					onMain++
				}
				for _, p := range s.parents {
					if p >= i {
						t.Fatalf("n %d seed %d: commit %d has a later parent %d", n, seed, i, p)
					}
				}
				if s.effect == EffectMerge && (len(s.parents) != 2 || steps[s.parents[1]].ref != "topic" || i == len(steps)-1) {
					t.Errorf("n %d seed %d: merge %d has parents %v", n, seed, i, s.parents)
				}
			}
			if onMain != n || count[EffectMerge] != 1 || count[EffectRealRegression] != 1 || count[EffectTextAlignment] != 1 || count[EffectBase] != 1 {
				t.Errorf("n %d seed %d: %d main commits, effects %v", n, seed, onMain, count)
			}
		}
	}
}
