// The bisect histories (one first-parent line, and one with a merged
// branch) and the watch history (a first-parent line with three planted
// changes).

package demo

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// planBisect plans n commits: the base, then n-1 commits among which sit,
// at positions drawn from seed, the real regression, the text alignment
// shift and the broken build (whose next commit fixes it).
func planBisect(n int, seed uint64, p Placement) []step {
	rng := rand.New(rand.NewPCG(seed, 0x70657266626f74)) // "perfbot"
	// Positions 1..n-1; the broken commit is followed by its fix, so it is
	// at most n-2 and neither it nor its fix may be a culprit.
	var realAt, textAt, brokenAt int
	for {
		realAt, textAt, brokenAt = 1+rng.IntN(n-1), 1+rng.IntN(n-1), 1+rng.IntN(n-2)
		if realAt != textAt && realAt != brokenAt && realAt != brokenAt+1 &&
			textAt != brokenAt && textAt != brokenAt+1 {
			break
		}
	}
	return assemble(n, rng, p, map[int]func(*tree) step{
		realAt: func(t *tree) step { return realStep(t, false) }, textAt: func(t *tree) step { return textStep(t, p) },
		brokenAt: brokenStep, brokenAt + 1: fixStep,
	})
}

// planWatch plans n commits for perfbot watch's figures: the base, then
// n-1 commits among which sit, at positions drawn from seed, the real
// regression, the text alignment shift, the data alignment shift and the
// broken build (whose next commit fixes it); all others are quiet. It is
// planBisect with a data-alignment commit, drawn from a stream of its own
// so that the bisect history of a seed stays what it was.
func planWatch(n int, seed uint64, p Placement) []step {
	rng := rand.New(rand.NewPCG(seed, 0x7761746368)) // "watch"
	var realAt, textAt, dataAt, brokenAt int
	for {
		realAt, textAt, dataAt, brokenAt = 1+rng.IntN(n-1), 1+rng.IntN(n-1), 1+rng.IntN(n-1), 1+rng.IntN(n-2)
		special := []int{realAt, textAt, dataAt}
		if realAt != textAt && realAt != dataAt && textAt != dataAt &&
			!slices.Contains(special, brokenAt) && !slices.Contains(special, brokenAt+1) {
			break
		}
	}
	return assemble(n, rng, p, map[int]func(*tree) step{
		realAt: func(t *tree) step { return realStep(t, false) }, textAt: func(t *tree) step { return textStep(t, p) }, dataAt: dataStep,
		brokenAt: brokenStep, brokenAt + 1: fixStep,
	})
}

// assemble makes the n commits of a history: the base, then at each
// position the planted step placed there, or a quiet commit drawn from
// rng (in position order, so a seed's history is always the same).
func assemble(n int, rng *rand.Rand, p Placement, planted map[int]func(*tree) step) []step {
	t := baseTree(p)
	s := []step{baseStep(t)}
	for i := 1; i < n; i++ {
		t = t.clone()
		if plant, ok := planted[i]; ok {
			s = append(s, plant(t))
		} else {
			s = append(s, quietStep(t, i, rng))
		}
	}
	return s
}

// brokenStep plans the first half of a rename, which breaks the build;
// fixStep the second, which builds the binary of before the rename.
func brokenStep(t *tree) step {
	t.Rename = 1
	return step{
		label: EffectBuildFailure, effect: EffectBuildFailure, tree: t,
		subject: "bench: rename tbest to text_best",
		body:    "Clearer next to dbest.",
	}
}

func fixStep(t *tree) step {
	t.Rename = 2
	return step{
		label: "build-fix", effect: EffectNoChange, tree: t,
		subject: "bench: finish the text_best rename",
		body:    "The previous commit renamed the declaration only and broke the build.",
	}
}

// quietStep plans commit i of the bisect history as one that changes
// nothing measurable: a notes entry or a comment.
func quietStep(t *tree, i int, rng *rand.Rand) step {
	label := fmt.Sprintf("c%02d", i)
	q := quietTopics[rng.IntN(len(quietTopics))]
	if rng.IntN(3) == 0 {
		t.Remarks = append(t.Remarks, fmt.Sprintf("Note %d: %s", len(t.Remarks)+1, q.text))
		return step{
			label: label, effect: EffectNoChange, tree: t,
			subject: "bench: comment on " + q.topic,
			body:    "Comment only.",
		}
	}
	t.Notes = append(t.Notes, fmt.Sprintf("Run %d: %s", i, q.text))
	return step{
		label: label, effect: EffectNoChange, tree: t,
		subject: fmt.Sprintf("notes: log run %d (%s)", i, q.topic),
		body:    "Documentation only.",
	}
}

// quietTopics are the subjects of the bisect history's quiet commits.
var quietTopics = []struct{ topic, text string }{
	{"batch sizes", "a batch takes about 2 ms of CPU time."},
	{"the checksum", "the checksum line keeps the kernels from being optimised away."},
	{"batch count", "40 batches per process; the fastest one is reported."},
	{"the input seed", "text_input is filled from the same seed on every run."},
	{"cache footprint", "data_kernel's arrays stay in L1."},
	{"a noisy host", "the host's other CPU was busy; the figures are within noise."},
	{"a kernel update", "re-ran after a kernel update; no difference."},
	{"the usage message", "bench prints its usage and exits 2 on a bad argument."},
}

// planBisectMerge plans n first-parent commits on main and a branch
// "topic" of max(4, n/3) commits, forked from main commit fork and merged
// by main commit mergeAt: the base, quiet commits on both, the text
// alignment shift on main and the real regression on the branch, at
// positions drawn from seed. Plan order: main up to the fork, the branch,
// then the rest of main.
func planBisectMerge(n int, seed uint64, p Placement) []step {
	rng := rand.New(rand.NewPCG(seed, 0x6d65726765)) // "merge"
	nb := max(4, n/3)
	fork := 1 + rng.IntN(n/2)                // main index the branch starts from
	mergeAt := fork + 2 + rng.IntN(n-fork-3) // at least one main commit between, one after
	realAt := rng.IntN(nb)                   // branch position of the real regression
	textAt := 1 + rng.IntN(n-1)              // main index of the alignment shift
	for textAt == mergeAt {
		textAt = 1 + rng.IntN(n-1)
	}
	var s []step
	mainIdx := map[int]int{} // main index -> plan index
	t := baseTree(p)
	addMain := func(i int, st step) {
		if i > 0 {
			st.parents = []int{mainIdx[i-1]}
		}
		mainIdx[i] = len(s)
		s = append(s, st)
	}
	mainStep := func(i int) step {
		t = t.clone()
		if i == textAt {
			return textStep(t, p)
		}
		return quietStep(t, i, rng)
	}
	addMain(0, baseStep(t))
	for i := 1; i <= fork; i++ {
		addMain(i, mainStep(i))
	}
	// The branch, from main's tree at the fork.
	bt, prev := t, mainIdx[fork]
	for j := range nb {
		bt = bt.clone()
		var st step
		if j == realAt {
			st = realStep(bt, false)
		} else {
			topic := quietTopics[rng.IntN(len(quietTopics))]
			bt.Topic = append(bt.Topic, fmt.Sprintf("Head scan %d: %s", j+1, topic.text))
			st = step{label: fmt.Sprintf("t%02d", j+1), effect: EffectNoChange, tree: bt,
				subject: fmt.Sprintf("notes: head scan %d (%s)", j+1, topic.topic), body: "Documentation only."}
		}
		st.parents, st.ref = []int{prev}, "topic"
		prev = len(s)
		s = append(s, st)
	}
	for i := fork + 1; i < n; i++ {
		if i != mergeAt {
			addMain(i, mainStep(i))
			continue
		}
		// The merge: main's tree with the branch's changes.
		t = t.clone()
		t.ExtraWords, t.ExtraWhy, t.Topic = bt.ExtraWords, bt.ExtraWhy, append([]string(nil), bt.Topic...)
		st := step{label: "merge", effect: EffectMerge, metric: MetricText, tree: t,
			subject: "Merge branch 'topic'", body: "Re-scan the input head after each call (the topic branch)."}
		addMain(i, st)
		s[len(s)-1].parents = append(s[len(s)-1].parents, prev)
	}
	return s
}
