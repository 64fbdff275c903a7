package bisect

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
)

// Every culprit and merges, on simulated histories with known truth.

// culpritSet returns the positions (path indices; side commits as
// 1000+their position) of the confirmed culprits, sorted.
func culpritSet(r *Result, h *simHistory) []int {
	var out []int
	for _, c := range r.Culprits {
		if p, ok := h.side[c.Commit.Hash]; ok {
			out = append(out, 1000+p)
		} else {
			out = append(out, h.pos(c.Commit.Hash)-1)
		}
	}
	slices.Sort(out)
	return out
}

func logSteps(t *testing.T, r *Result) {
	t.Helper()
	for i, rg := range r.Ranges {
		t.Logf("  range %d: %s %s..%s %d commits, %s, ends %+v, %d runs; %s", i+1, rg.Kind, rg.Good.Short(), rg.Bad.Short(), rg.Commits, rg.Status, rg.Ends, rg.Runs, rg.Note)
	}
}

// changes draws k distinct positions in 1..62 and sizes (+15 to +35 %).
func changes(seed int64, k int) map[int]float64 {
	rng := rand.New(rand.NewSource(seed))
	out := map[int]float64{}
	for len(out) < k {
		out[1+rng.Intn(62)] = math.Log(1.15 + 0.2*rng.Float64())
	}
	return out
}

func keys(m map[int]float64) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestEveryCulprit: two and three regressions in one 63-commit range, at
// random places, 3 % noise, outliers and drift: every one is named and
// confirmed, each with its own parent and a change of its own size, and no
// run is taken twice.
func TestEveryCulprit(t *testing.T) {
	for _, k := range []int{2, 3} {
		const cases = 40
		missed := 0
		for seed := range int64(cases) {
			truth := changes(100*int64(k)+seed, k)
			h := newHistory(63, truth, nil, nil)
			m := newSim(h, seed)
			quiet(m)
			r, err := bisectSim(t, h, m, options{})
			if err != nil {
				t.Fatalf("%d changes, seed %d: %v", k, seed, err)
			}
			if m.repeated != 0 || r.Runs != m.taken {
				t.Fatalf("%d changes, seed %d: %d runs repeated, result says %d runs, measurer took %d", k, seed, m.repeated, r.Runs, m.taken)
			}
			got := culpritSet(r, h)
			if !slices.Equal(got, keys(truth)) {
				missed++
				t.Logf("%d changes, seed %d: culprits %v, want %v", k, seed, got, keys(truth))
				logSteps(t, r)
				continue
			}
			for _, c := range r.Culprits {
				i := h.pos(c.Commit.Hash) - 1
				if c.Parent.Hash != h.commitAt(i-1).Hash || c.Check == nil || !c.Check.Confirmed || !within(c.Check.Comparison, truth[i]) {
					t.Errorf("%d changes, seed %d: culprit %d: parent %s, change %+.1f%% (want %+.1f%%), check %+v", k, seed, i, c.Parent.Short(), c.Change, 100*math.Expm1(truth[i]), c.Check)
				}
			}
			if r.Culprit == nil || r.Culprit.Hash != r.Culprits[0].Commit.Hash || !r.Found() {
				t.Errorf("%d changes, seed %d: Result.Culprit %v is not the first of Culprits", k, seed, r.Culprit)
			}
		}
		t.Logf("%d changes: %d of %d bisections did not name exactly every culprit", k, missed, cases)
		// Each culprit needs its own search; an error needs a false
		// decision at alpha 0.01 per look, or a change lost in noise.
		if missed > cases/10 {
			t.Errorf("%d changes: %d of %d bisections did not name every culprit", k, missed, cases)
		}
	}
}

// TestOneCulpritOnly: MaxCulprits 1 is the single-culprit bisection: no
// range after the main one, no extra run.
func TestOneCulpritOnly(t *testing.T) {
	h := newHistory(63, map[int]float64{12: math.Log(1.2), 40: math.Log(1.3)}, nil, nil)
	r, err := bisectSim(t, h, newSim(h, 1), options{MaxCulprits: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Culprits) != 1 || len(r.Ranges) != 1 || r.ExtraRuns() != 0 || len(r.Unsearched()) != 0 {
		t.Errorf("%d culprits, %d ranges, %d extra runs; want 1, 1, 0", len(r.Culprits), len(r.Ranges), r.ExtraRuns())
	}
}

// TestBudget: three changes and room for two culprits: two are named, the
// ranges left are reported unsearched, and resuming with a larger budget
// finds the third. A cap on extra runs stops the search the same way.
func TestBudget(t *testing.T) {
	truth := map[int]float64{10: math.Log(1.25), 30: math.Log(1.3), 50: math.Log(1.2)}
	h := newHistory(63, truth, nil, nil)
	m := newSim(h, 3)
	var saved []byte
	save := func(ctx context.Context, st *State) (err error) { saved, err = json.Marshal(st); return }
	r, err := bisectSim(t, h, m, options{MaxCulprits: 2, Save: save})
	if err != nil {
		t.Fatal(err)
	}
	un := r.Unsearched()
	if len(r.Culprits) != 2 || len(un) == 0 || !r.Found() {
		logSteps(t, r)
		t.Fatalf("%d culprits, %d ranges unsearched; want 2 and some", len(r.Culprits), len(un))
	}
	for _, rg := range un {
		if !strings.Contains(rg.Note, "2 culprits named, the most the budget allows") {
			t.Errorf("unsearched range's note: %q", rg.Note)
		}
	}
	taken := m.taken
	var st State
	if err := json.Unmarshal(saved, &st); err != nil {
		t.Fatal(err)
	}
	r2, err := bisectSim(t, h, m, options{MaxCulprits: 3, Resume: &st})
	if err != nil {
		t.Fatal(err)
	}
	if got := culpritSet(r2, h); !slices.Equal(got, keys(truth)) || m.repeated != 0 {
		logSteps(t, r2)
		t.Errorf("resumed with room for 3: culprits %v, want %v (%d runs repeated)", got, keys(truth), m.repeated)
	}
	if m.taken == taken {
		t.Error("the resumed bisection took no run")
	}

	// A cap on extra runs.
	m = newSim(h, 3)
	r, err = bisectSim(t, h, m, options{ExtraRuns: 15})
	if err != nil {
		t.Fatal(err)
	}
	un = r.Unsearched()
	if len(un) == 0 || len(r.Culprits) == 3 {
		logSteps(t, r)
		t.Fatalf("%d culprits, %d ranges unsearched under a 15-run budget", len(r.Culprits), len(un))
	}
	if !strings.Contains(un[0].Note, "the budget of 15 extra runs is spent") {
		t.Errorf("note %q", un[0].Note)
	}
	// A range is stopped at its next step, or not started, once the
	// budget is spent: it overshoots by at most one look (and a check).
	if r.ExtraRuns() > 15+2*DefaultMaxRuns+20 {
		t.Errorf("%d extra runs under a budget of 15", r.ExtraRuns())
	}
}

// mergeHistory is 40 commits whose position 25 merges a 12-commit branch
// forked at position 10; side[j] and inter as for addMerge.
func mergeHistory(main map[int]float64, side map[int]float64, inter float64) (*simHistory, []gitrev.Commit) {
	h := newHistory(40, main, nil, nil)
	return h, h.addMerge(25, 10, 12, side, inter)
}

// TestCulpritInsideMerge: the regression came in through a merge: the
// first-parent search lands on the merge, the merged side reproduces the
// change against the merge base, and the culprit named is the commit inside
// the branch, with the merge it came through.
func TestCulpritInsideMerge(t *testing.T) {
	for seed := range int64(10) {
		h, side := mergeHistory(nil, map[int]float64{7: math.Log(1.3)}, 0)
		m := newSim(h, seed)
		quiet(m)
		r, err := bisectSim(t, h, m, options{Graph: simGraph{h}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Culprits) != 1 || r.Culprit == nil || r.Culprit.Hash != side[7].Hash || !r.Found() {
			logSteps(t, r)
			t.Fatalf("seed %d: culprits %+v, want side commit 7 %s", seed, r.Culprits, side[7].Short())
		}
		c := r.Culprits[0]
		if c.Parent.Hash != side[6].Hash || len(c.Via) != 1 || c.Via[0].Hash != h.path[25].Hash || c.Merge || r.Merge {
			t.Errorf("seed %d: culprit %+v; want parent side 6, via the merge", seed, c)
		}
		var mr *Range
		for i := range r.Ranges {
			if r.Ranges[i].Kind == RangeMerge {
				mr = &r.Ranges[i]
			}
		}
		if mr == nil || mr.Good.Hash != h.path[10].Hash || mr.Bad.Hash != side[11].Hash || mr.Commits != 12 || mr.Ends == nil || mr.Ends.Decision != "different" {
			t.Errorf("seed %d: merge range %+v; want base path[10], side tip, 12 commits, reproducing", seed, mr)
		}
	}
}

// TestMergeInteraction: neither side alone has the change (the branch
// changes nothing; the merge's combination does): the merged side does not
// reproduce it, and the merge itself is the culprit, marked so.
func TestMergeInteraction(t *testing.T) {
	h, _ := mergeHistory(nil, nil, math.Log(1.3))
	r, err := bisectSim(t, h, newSim(h, 2), options{Graph: simGraph{h}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Culprits) != 1 || culpritPos(r, h) != 25 || !r.Merge || !r.Found() {
		logSteps(t, r)
		t.Fatalf("culprits %+v; want the merge at 25", r.Culprits)
	}
	c := r.Culprits[0]
	if !c.Interaction || !c.Merge || !strings.Contains(c.Note, "neither side alone") {
		t.Errorf("merge culprit %+v: want an interaction, said so", c)
	}
	// FirstParentOnly leaves the merge alone, as before.
	h2, _ := mergeHistory(nil, map[int]float64{3: math.Log(1.3)}, 0)
	r, err = bisectSim(t, h2, newSim(h2, 2), options{Graph: simGraph{h2}, FirstParentOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if culpritPos(r, h2) != 25 || !r.Merge || r.Culprits[0].Interaction || len(r.Ranges) != 3 {
		logSteps(t, r)
		t.Errorf("first-parent only: culprit %d, merge %v, %d ranges; want the merge, and the 2 ranges beside it", culpritPos(r, h2), r.Merge, len(r.Ranges))
	}
}

// TestMergeAndMainCulprits: a change on the first-parent history and
// another inside a merged branch: both are named, the second inside the
// branch.
func TestMergeAndMainCulprits(t *testing.T) {
	h, side := mergeHistory(map[int]float64{33: math.Log(1.25)}, map[int]float64{4: math.Log(1.3)}, 0)
	r, err := bisectSim(t, h, newSim(h, 5), options{Graph: simGraph{h}})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{33, 1000 + h.side[side[4].Hash]}
	if got := culpritSet(r, h); !slices.Equal(got, want) {
		logSteps(t, r)
		t.Errorf("culprits %v, want %v", got, want)
	}
}

// TestResumeRanges kills a bisection with two culprits, one inside a
// merge, after k runs for many k, and resumes it: no run is taken twice,
// and the same culprits are named.
func TestResumeRanges(t *testing.T) {
	h, side := mergeHistory(map[int]float64{33: math.Log(1.3)}, map[int]float64{4: math.Log(1.3)}, 0)
	want := []int{33, 1000 + h.side[side[4].Hash]}
	full := newSim(h, 9)
	if _, err := bisectSim(t, h, full, options{Graph: simGraph{h}}); err != nil {
		t.Fatal(err)
	}
	for k := 1; k < full.taken; k += 5 {
		m := newSim(h, 9)
		m.killAfter = k
		var saved []byte
		save := func(ctx context.Context, st *State) (err error) { saved, err = json.Marshal(st); return }
		if _, err := bisectSim(t, h, m, options{Save: save, Graph: simGraph{h}}); !errors.Is(err, errKilled) {
			t.Fatalf("kill after %d: err = %v", k, err)
		}
		var st *State
		if saved != nil {
			st = new(State)
			if err := json.Unmarshal(saved, st); err != nil {
				t.Fatal(err)
			}
		}
		m.killAfter = 0
		r, err := bisectSim(t, h, m, options{Save: save, Resume: st, Graph: simGraph{h}})
		if err != nil {
			t.Fatalf("resume after %d runs: %v", k, err)
		}
		if got := culpritSet(r, h); m.repeated != 0 || !slices.Equal(got, want) {
			t.Errorf("resume after %d runs: culprits %v (want %v), %d runs repeated", k, got, want, m.repeated)
		}
	}
	// Without the graph, a saved search inside a merge cannot go on.
	m := newSim(h, 9)
	m.killAfter = full.taken - 5
	var saved State
	_, _ = bisectSim(t, h, m, options{Save: func(ctx context.Context, st *State) error { saved = *st; return nil }, Graph: simGraph{h}})
	if saved.Result.Ranges[saved.Range].Path > 0 {
		if _, err := bisectSim(t, h, m, options{Resume: &saved}); err == nil || !strings.Contains(err.Error(), "needs the commit graph") {
			t.Errorf("resumed inside a merge without a graph: %v", err)
		}
	}
}

// TestEveryImprovement: the search for improvements names each of two
// too; and with a Triage function, every culprit is triaged once, against
// its own parent.
func TestEveryImprovement(t *testing.T) {
	truth := map[int]float64{14: math.Log(0.8), 44: math.Log(0.75)}
	h := newHistory(63, truth, nil, nil)
	triaged := map[string]string{}
	tri := func(ctx context.Context, parent, culprit gitrev.Commit) (*Triage, error) {
		if _, ok := triaged[culprit.Hash]; ok {
			t.Errorf("%s triaged twice", culprit.Short())
		}
		triaged[culprit.Hash] = parent.Hash
		return &Triage{Verdict: "real-regression", Sentence: "real"}, nil
	}
	r, err := bisectSim(t, h, newSim(h, 4), options{Improvement: true, Triage: tri})
	if err != nil {
		t.Fatal(err)
	}
	if got := culpritSet(r, h); !slices.Equal(got, keys(truth)) {
		logSteps(t, r)
		t.Fatalf("culprits %v, want %v", got, keys(truth))
	}
	for _, c := range r.Culprits {
		if triaged[c.Commit.Hash] != c.Parent.Hash || c.Triage == nil || c.Triage.Verdict != "real-regression" {
			t.Errorf("culprit %s: triaged against %q, triage %+v", c.Commit.Short(), triaged[c.Commit.Hash], c.Triage)
		}
	}
	if r.Triage == nil || len(triaged) != 2 {
		t.Errorf("Result.Triage %v, %d triages", r.Triage, len(triaged))
	}
}

// TestTwoInsideMerge: a merged branch with two changes: both are named,
// each through the merge, and the merge is no longer a culprit.
func TestTwoInsideMerge(t *testing.T) {
	for seed := range int64(5) {
		h, side := mergeHistory(nil, map[int]float64{2: math.Log(1.2), 8: math.Log(1.25)}, 0)
		r, err := bisectSim(t, h, newSim(h, seed), options{Graph: simGraph{h}})
		if err != nil {
			t.Fatal(err)
		}
		want := []int{1000 + h.side[side[2].Hash], 1000 + h.side[side[8].Hash]}
		if got := culpritSet(r, h); !slices.Equal(got, want) {
			logSteps(t, r)
			t.Fatalf("seed %d: culprits %v, want %v", seed, got, want)
		}
		for _, c := range r.Culprits {
			if len(c.Via) != 1 || c.Via[0].Hash != h.path[25].Hash || c.Merge {
				t.Errorf("seed %d: culprit %s via %v", seed, c.Commit.Short(), c.Via)
			}
		}
	}
}
