package bisect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
)

// A simulated history with known truth, measured by a simulated machine
// with noise, outliers and drift. The bisection core cannot tell it from
// the real measurer: it sees only stored runs.

// simHistory is a good commit followed by a first-parent path.
type simHistory struct {
	good gitrev.Commit
	path []gitrev.Commit
	// level[i] is the true log figure of position i (-1 is good, at
	// level[0]; path[i] at level[i+1]), per layout shift: the figure is
	// exp(level + align(shift)) where shift counts alignment commits.
	level  []float64
	shift  []int // alignment shifts so far, per position (same indexing)
	broken map[int]bool
	// runFails marks positions whose runs all fail.
	runFails map[int]bool
	// side holds the positions of the commits of merged branches, which
	// are not on the path (see addMerge), and parents their parents.
	side    map[string]int
	parents map[string][]gitrev.Commit
}

func (h *simHistory) pos(hash string) int {
	if hash == h.good.Hash {
		return 0
	}
	if p, ok := h.side[hash]; ok {
		return p
	}
	for i, c := range h.path {
		if c.Hash == hash {
			return i + 1
		}
	}
	panic("unknown commit " + hash)
}

// newHistory makes n commits after good; real[i] is the log change of
// path[i] (0 for none), align the positions (path indices) of
// alignment-only commits.
func newHistory(n int, real map[int]float64, align []int, broken []int) *simHistory {
	h := &simHistory{good: gitrev.Commit{Hash: fmt.Sprintf("%040x", 0), Subject: "good"}, broken: map[int]bool{}, runFails: map[int]bool{}}
	lvl, sh := 0.0, 0
	h.level, h.shift = []float64{0}, []int{0}
	for i := range n {
		h.path = append(h.path, gitrev.Commit{Hash: fmt.Sprintf("%040x", i+1), Subject: fmt.Sprintf("commit %d", i)})
		lvl += real[i]
		for _, a := range align {
			if a == i {
				sh++
			}
		}
		h.level, h.shift = append(h.level, lvl), append(h.shift, sh)
	}
	for _, b := range broken {
		h.broken[b+1] = true
	}
	return h
}

// simMeasurer stores runs in memory and draws them from the history.
type simMeasurer struct {
	h       *simHistory
	rng     *rand.Rand
	layouts int     // 1: plain build; >1: a sweep of text layouts
	forced  bool    // forced alignment: alignment shifts have no effect
	cv      float64 // run-to-run noise (lognormal sigma)
	outlier float64 // probability that a run is hit by the other core (up to +40 %)
	drift   float64 // amplitude of a slow drift of the machine's speed
	// burst is the probability that a burst of load starts at a run; a
	// burst slows every run by burstSize (log) and lasts 1/(1-0.6) runs on
	// average, as the other helpers' builds do on the project's machines.
	burst, burstSize float64
	inBurst          bool
	clock            int // runs taken so far, the drift's time
	runs             map[string][][]Value
	built            map[string]bool
	newly            int // builds since the last Measure
	// killAfter > 0 makes Measure fail with errKilled once that many
	// runs were taken in total (a SIGKILL: the runs before it are kept).
	killAfter int
	taken     int
	repeated  int // runs taken at an index already stored (must stay 0)
}

var errKilled = errors.New("killed")

func newSim(h *simHistory, seed int64) *simMeasurer {
	return &simMeasurer{h: h, rng: rand.New(rand.NewSource(seed)), layouts: 1, cv: 0.03,
		runs: map[string][][]Value{}, built: map[string]bool{}}
}

func (m *simMeasurer) Layouts() int { return m.layouts }

// alignPenalty is the slowdown of a hot loop at text offset (16*shift +
// 16*layout) mod 64: slow in one of the four 16-byte slots, as the demo's
// loop that crosses a cache line.
func alignPenalty(shift, layout int) float64 {
	if (shift+layout+1)%4 == 0 {
		return math.Log(1.43)
	}
	return 0
}

func (m *simMeasurer) draw(pos, layout int) Value {
	if m.h.runFails[pos] {
		return Value{OK: false, Reason: "crashed: exit status 1"}
	}
	x := m.h.level[pos]
	if !m.forced {
		x += alignPenalty(m.h.shift[pos], layout)
	}
	x += m.cv * m.rng.NormFloat64()
	x += m.drift * math.Sin(float64(m.clock)/40)
	if m.inBurst {
		m.inBurst = m.rng.Float64() < 0.6
	} else {
		m.inBurst = m.rng.Float64() < m.burst
	}
	if m.inBurst {
		x += m.burstSize
	}
	if m.rng.Float64() < m.outlier {
		x += 0.4 * m.rng.Float64()
	}
	return Value{OK: true, Value: 100 * math.Exp(x)}
}

func (m *simMeasurer) Measure(ctx context.Context, reqs []Request) (*Batch, error) {
	b := &Batch{Better: metric.LowerIsBetter}
	// Builds.
	for _, r := range reqs {
		if !m.built[r.Commit.Hash] {
			m.built[r.Commit.Hash] = true
			m.newly += m.layouts
		}
	}
	b.Built, m.newly = m.newly, 0
	// Interleaved rounds over what is missing.
	type need struct {
		req, layout int
		missing     []int // run numbers to take
	}
	var needs []need
	for i, r := range reqs {
		pos := m.h.pos(r.Commit.Hash)
		if m.h.broken[pos] {
			continue
		}
		if m.runs[r.Commit.Hash] == nil {
			m.runs[r.Commit.Hash] = make([][]Value, m.layouts)
		}
		for k := range m.layouts {
			have := map[int]bool{}
			for _, v := range m.runs[r.Commit.Hash][k] {
				have[v.Index] = true
			}
			var miss []int
			for idx := r.From + 1; idx <= r.Runs; idx++ {
				if !have[idx] {
					miss = append(miss, idx)
				}
			}
			if len(miss) > 0 {
				needs = append(needs, need{i, k, miss})
			}
		}
	}
	var counts []int
	for _, n := range needs {
		counts = append(counts, len(n.missing))
	}
	next := make([]int, len(needs))
	for _, i := range measure.Spread(counts, m.rng) {
		n := needs[i]
		if m.killAfter > 0 && m.taken >= m.killAfter {
			return b, errKilled
		}
		if err := ctx.Err(); err != nil {
			return b, err
		}
		h := reqs[n.req].Commit.Hash
		v := m.draw(m.h.pos(h), n.layout)
		idx := n.missing[next[i]]
		next[i]++
		for _, old := range m.runs[h][n.layout] {
			if old.Index == idx {
				m.repeated++
			}
		}
		v.Index = idx
		m.runs[h][n.layout] = append(m.runs[h][n.layout], v)
		m.clock++
		m.taken++
		b.Taken++
	}
	for _, ls := range m.runs {
		for _, l := range ls {
			slices.SortFunc(l, func(a, b Value) int { return a.Index - b.Index })
		}
	}
	for _, r := range reqs {
		s := Samples{Layouts: m.runs[r.Commit.Hash]}
		if m.h.broken[m.h.pos(r.Commit.Hash)] {
			s = Samples{BuildErr: fmt.Errorf("build failed: %s: exit status 2", r.Commit.Short())}
		}
		if s.Layouts == nil && s.BuildErr == nil {
			s.Layouts = make([][]Value, m.layouts)
		}
		b.Samples = append(b.Samples, s)
	}
	return b, nil
}

// stored counts every stored run.
func (m *simMeasurer) stored() int {
	n := 0
	for _, ls := range m.runs {
		for _, l := range ls {
			n += len(l)
		}
	}
	return n
}

func bisectSim(t testing.TB, h *simHistory, m *simMeasurer, opt options) (*Result, error) {
	t.Helper()
	opt.Measurer = m
	opt.Metric = "text_ms"
	return search(context.Background(), opt, h.good, h.path)
}

func culpritPos(r *Result, h *simHistory) int {
	if r == nil || r.Culprit == nil {
		return -1
	}
	return h.pos(r.Culprit.Hash) - 1
}

// TestFindsRealCulprit: a 30 % regression at a random place in 63 commits,
// 3 % noise, occasional outliers and a slow drift: the statistical
// bisection names it and the check confirms it, across many histories.
func TestFindsRealCulprit(t *testing.T) {
	const cases = 200
	wrong := 0
	for seed := range int64(cases) {
		rng := rand.New(rand.NewSource(seed))
		at := rng.Intn(63)
		h := newHistory(63, map[int]float64{at: math.Log(1.30)}, nil, nil)
		m := newSim(h, seed)
		m.outlier, m.drift = 0.05, 0.02
		r, err := bisectSim(t, h, m, options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if culpritPos(r, h) != at || !r.Found() {
			wrong++
			t.Logf("seed %d: culprit %d, want %d; check %+v", seed, culpritPos(r, h), at, r.Check)
		}
		if r.Runs != m.taken || m.repeated != 0 {
			t.Fatalf("seed %d: result says %d runs, measurer took %d, %d repeated", seed, r.Runs, m.taken, m.repeated)
		}
	}
	// Each wrong answer needs a false decision at alpha 0.01 per look.
	if wrong > cases/50 {
		t.Errorf("%d of %d bisections named the wrong culprit", wrong, cases)
	}
}

// simScheme runs one bisection scheme over many simulated 64-commit
// histories with a regression of the given size at a random place, and
// returns the mean runs taken to find the culprit (the check excluded),
// the mean check runs, and the fraction of bisections that did not name
// the right culprit with a confirming check (for the fixed scheme, which
// has no check: that did not name it). The runs are those of the main
// range, the search "git bisect" would make; the runs taken afterwards to
// rule out more culprits (the ranges the culprit leaves) are left out
// here and reported by simExtra.
func simScheme(t testing.TB, cases int, effect float64, noise func(*simMeasurer), opt options) (find, check, wrong float64) {
	find, check, _, wrong = simSchemeExtra(t, cases, effect, noise, opt)
	return find, check, wrong
}

// simSchemeExtra is simScheme, with the mean runs taken after the main
// range (extra) and a wrong answer also when another culprit is named.
func simSchemeExtra(t testing.TB, cases int, effect float64, noise func(*simMeasurer), opt options) (find, check, extra, wrong float64) {
	for seed := range int64(cases) {
		at := rand.New(rand.NewSource(seed)).Intn(63)
		h := newHistory(63, map[int]float64{at: math.Log(effect)}, nil, nil)
		m := newSim(h, seed)
		noise(m)
		r, err := bisectSim(t, h, m, opt)
		if err != nil || culpritPos(r, h) != at || !r.Found() || len(r.Culprits) != 1 {
			wrong++
		}
		if r != nil && len(r.Ranges) > 0 {
			find += float64(r.Ranges[0].Runs - r.Ranges[0].CheckRuns)
			check += float64(r.Ranges[0].CheckRuns)
			extra += float64(r.ExtraRuns())
		}
	}
	n := float64(cases)
	return find / n, check / n, extra / n, wrong / n
}

// quiet is 3 % noise with 5 % outliers; bursty adds bursts of load that
// slow a few runs in a row by 30 %, as the project's shared machines do.
func quiet(m *simMeasurer)  { m.outlier, m.drift = 0.05, 0.02 }
func bursty(m *simMeasurer) { quiet(m); m.burst, m.burstSize = 0.03, math.Log(1.3) }

// TestAgainstFixed is the comparison on simulated histories: the
// statistical bisection against "git bisect run" with a fixed number of
// runs per commit. On a quiet machine both are right and cost about the
// same; with bursts of load the fixed schemes name the wrong commit often,
// even with 10 runs per commit, while the statistical bisection stays
// right, with half the runs of the 20-run scheme that comes close.
func TestAgainstFixed(t *testing.T) {
	const cases = 150
	fa, ca, wa := simScheme(t, cases, 1.30, quiet, options{})
	f6, _, w6 := simScheme(t, cases, 1.30, quiet, options{Fixed: 6})
	t.Logf("quiet: statistical %.1f runs to find + %.1f to check, %.1f%% wrong; fixed-6 %.1f runs, %.1f%% wrong", fa, ca, 100*wa, f6, 100*w6)
	if wa > 0.02 || fa > 1.1*f6 {
		t.Errorf("quiet machine: statistical bisection %.1f runs, %.1f%% wrong; want at most 10%% more than fixed-6's %.1f, and under 2%% wrong", fa, 100*wa, f6)
	}
	fa, ca, wa = simScheme(t, cases, 1.30, bursty, options{})
	f6, _, w6 = simScheme(t, cases, 1.30, bursty, options{Fixed: 6})
	f10, _, w10 := simScheme(t, cases, 1.30, bursty, options{Fixed: 10})
	f20, _, w20 := simScheme(t, cases, 1.30, bursty, options{Fixed: 20})
	t.Logf("bursts: statistical %.1f+%.1f runs, %.1f%% wrong; fixed-6 %.1f runs, %.1f%% wrong; fixed-10 %.1f runs, %.1f%% wrong; fixed-20 %.1f runs, %.1f%% wrong",
		fa, ca, 100*wa, f6, 100*w6, f10, 100*w10, f20, 100*w20)
	if wa > 0.02 || wa >= w6/2 || wa >= w10/2 || wa > w20 {
		t.Errorf("bursts: statistical bisection %.1f%% wrong; fixed-6 %.1f%%, fixed-10 %.1f%%, fixed-20 %.1f%%: want under 2%%, under half of fixed-6's and fixed-10's, at most fixed-20's",
			100*wa, 100*w6, 100*w10, 100*w20)
	}
	// The fixed scheme needs about 20 runs per commit to be about as
	// reliable; the statistical one takes far fewer, check included.
	if fa+ca >= f20/1.5 {
		t.Errorf("bursts: statistical bisection took %.1f runs, fixed-20 %.1f: want at most two thirds", fa+ca, f20)
	}
	// A small change (8 %, 4 % noise): the fixed scheme is often wrong.
	fa, _, wa = simScheme(t, cases, 1.08, func(m *simMeasurer) { quiet(m); m.cv = 0.04 }, options{})
	f6, _, w6 = simScheme(t, cases, 1.08, func(m *simMeasurer) { quiet(m); m.cv = 0.04 }, options{Fixed: 6})
	t.Logf("8%% change: statistical %.1f runs, %.1f%% wrong; fixed-6 %.1f runs, %.1f%% wrong", fa, 100*wa, f6, 100*w6)
	if wa > 0.05 || w6 < 0.2 {
		t.Errorf("8%% change: statistical %.1f%% wrong, fixed-6 %.1f%%", 100*wa, 100*w6)
	}
}

func TestNoChange(t *testing.T) {
	h := newHistory(20, nil, nil, nil)
	m := newSim(h, 1)
	r, err := bisectSim(t, h, m, options{})
	if !errors.Is(err, ErrNoChange) {
		t.Fatalf("err = %v, want ErrNoChange", err)
	}
	if len(r.Steps) != 0 || m.stored() > 2*DefaultMaxRuns+2 || len(m.runs) != 2 {
		t.Errorf("measured %d runs of %d commits and %d steps; want only runs of the ends", m.stored(), len(m.runs), len(r.Steps))
	}
}

func TestWrongDirection(t *testing.T) {
	h := newHistory(20, map[int]float64{7: math.Log(0.7)}, nil, nil)
	_, err := bisectSim(t, h, newSim(h, 1), options{})
	if !errors.Is(err, ErrWrongDirection) {
		t.Fatalf("err = %v, want ErrWrongDirection", err)
	}
	// Searching for the improvement finds it.
	r, err := bisectSim(t, h, newSim(h, 1), options{Improvement: true})
	if err != nil {
		t.Fatal(err)
	}
	if culpritPos(r, h) != 7 || !r.Found() {
		t.Errorf("improvement search: culprit %d (found %v), want 7", culpritPos(r, h), r.Found())
	}
}

// TestSkipsBrokenBuilds: the commits at the middle do not build; they are
// skipped and reported, and the culprit is still found.
func TestSkipsBrokenBuilds(t *testing.T) {
	h := newHistory(31, map[int]float64{20: math.Log(1.3)}, nil, []int{15, 16, 14})
	r, err := bisectSim(t, h, newSim(h, 3), options{})
	if err != nil {
		t.Fatal(err)
	}
	if culpritPos(r, h) != 20 || !r.Found() {
		t.Fatalf("culprit %d, want 20", culpritPos(r, h))
	}
	sk := r.Skipped()
	if len(sk) == 0 || r.BuildFailures != len(sk) {
		t.Fatalf("skipped %d steps, %d build failures; want the broken commits skipped", len(sk), r.BuildFailures)
	}
	for _, s := range sk {
		if !h.broken[s.Index+1] {
			t.Errorf("skipped %d, which builds", s.Index)
		}
	}
}

// TestSkipLeavesCandidates: the culprit's parent does not build and the
// culprit follows it, so as with git bisect skip only a range is known.
func TestSkipLeavesCandidates(t *testing.T) {
	h := newHistory(16, map[int]float64{9: math.Log(1.3)}, nil, []int{8})
	r, err := bisectSim(t, h, newSim(h, 3), options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Culprit != nil || len(r.Candidates) != 2 || r.Candidates[0].Hash != h.path[8].Hash || r.Candidates[1].Hash != h.path[9].Hash {
		t.Fatalf("culprit %v, candidates %v; want candidates 8 and 9", r.Culprit, r.Candidates)
	}
	if r.Found() {
		t.Error("Found() is true without a single culprit")
	}
	// The span: the skipped commit 8 and the first that builds after it,
	// to be compared with 7, the last that built before it.
	sp := r.SkipSpans()
	if len(sp) != 1 || sp[0].Good.Hash != h.path[7].Hash || sp[0].First.Hash != h.path[9].Hash ||
		len(sp[0].Skipped) != 1 || sp[0].Skipped[0].Hash != h.path[8].Hash || sp[0].Range != 0 {
		t.Errorf("skip spans %+v; want 7 good, 8 skipped, 9 the first that builds", sp)
	}
}

func TestAllRunsFailIsSkip(t *testing.T) {
	h := newHistory(15, map[int]float64{11: math.Log(1.3)}, nil, nil)
	h.runFails[7] = true // path index 6, the first midpoint
	r, err := bisectSim(t, h, newSim(h, 5), options{})
	if err != nil {
		t.Fatal(err)
	}
	if culpritPos(r, h) != 11 {
		t.Fatalf("culprit %d, want 11", culpritPos(r, h))
	}
	sk := r.Skipped()
	if len(sk) != 1 || sk[0].Index != 6 || r.BuildFailures != 0 {
		t.Fatalf("skipped %+v; want path index 6 skipped for failed runs", sk)
	}
}

func TestEndFails(t *testing.T) {
	h := newHistory(10, map[int]float64{3: 0.3}, nil, []int{9})
	_, err := bisectSim(t, h, newSim(h, 1), options{})
	if !errors.Is(err, ErrEndFailed) {
		t.Fatalf("err = %v, want ErrEndFailed", err)
	}
}

// TestTwoChanges: an alignment-only shift (+43 % in the plain build) and
// a real 30 % regression in one range. The plain bisection follows the
// nearer end and lands on one of them; with forced alignment, or with a
// layout sweep, it lands on the real one.
func TestTwoChanges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		forced  bool
		layouts int
		want    []int
	}{
		{"plain", false, 1, []int{10, 40}},
		{"forced", true, 1, []int{40}},
		{"sweep", false, 4, []int{40}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range int64(10) {
				h := newHistory(63, map[int]float64{40: math.Log(1.3)}, []int{10}, nil)
				m := newSim(h, seed)
				m.forced, m.layouts = tc.forced, tc.layouts
				r, err := bisectSim(t, h, m, options{})
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				got := culpritPos(r, h)
				ok := false
				for _, w := range tc.want {
					ok = ok || got == w
				}
				if !ok {
					t.Errorf("seed %d: culprit %d, want one of %v; steps:", seed, got, tc.want)
					for _, s := range r.Steps {
						t.Logf("  %+v", s)
					}
				}
			}
		})
	}
}

// TestResume kills the bisection after k runs, for many k, and resumes it
// from the last saved state: no run is ever taken twice, the run counts
// add up, and the culprit is the right one.
func TestResume(t *testing.T) {
	h := newHistory(63, map[int]float64{37: math.Log(1.3)}, nil, []int{31})
	full := newSim(h, 9)
	ref, err := bisectSim(t, h, full, options{})
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k < full.taken; k += 3 {
		m := newSim(h, 9)
		m.killAfter = k
		var saved []byte
		save := func(ctx context.Context, st *State) error {
			var err error
			saved, err = json.Marshal(st)
			return err
		}
		_, err := bisectSim(t, h, m, options{Save: save})
		if !errors.Is(err, errKilled) {
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
		r, err := bisectSim(t, h, m, options{Save: save, Resume: st})
		if err != nil {
			t.Fatalf("resume after %d runs: %v", k, err)
		}
		if m.repeated != 0 {
			t.Fatalf("resume after %d runs: %d runs repeated", k, m.repeated)
		}
		if culpritPos(r, h) != 37 || !r.Found() {
			t.Errorf("resume after %d runs: culprit %d, want 37", k, culpritPos(r, h))
		}
		// The result counts the runs of both sessions, up to the last
		// checkpoint of the first: runs taken after it are counted again
		// only if the resumed session measured them (it reuses them).
		if m.stored() != m.taken || r.Runs > m.taken {
			t.Errorf("resume after %d runs: stored %d, taken %d, result says %d", k, m.stored(), m.taken, r.Runs)
		}
		if len(r.Steps) < len(ref.Steps)-1 {
			t.Errorf("resume after %d runs: %d steps, uninterrupted %d", k, len(r.Steps), len(ref.Steps))
		}
	}
}

// TestResumeDone: re-running a finished bisection takes no run.
func TestResumeDone(t *testing.T) {
	h := newHistory(20, map[int]float64{5: 0.3}, nil, nil)
	m := newSim(h, 2)
	var st State
	save := func(ctx context.Context, s *State) error { st = *s; return nil }
	r1, err := bisectSim(t, h, m, options{Save: save})
	if err != nil {
		t.Fatal(err)
	}
	taken := m.taken
	r2, err := bisectSim(t, h, m, options{Resume: &st})
	if err != nil {
		t.Fatal(err)
	}
	if m.taken != taken || r2.Culprit.Hash != r1.Culprit.Hash {
		t.Errorf("re-run took %d more runs, culprit %v vs %v", m.taken-taken, r2.Culprit, r1.Culprit)
	}
}

func TestResumeMismatch(t *testing.T) {
	h := newHistory(20, map[int]float64{5: 0.3}, nil, nil)
	st := &State{Version: StateVersion, Phase: PhaseSteps, LoHi: [2]int{-1, 19}, Result: Result{Good: h.path[0], Bad: h.path[19], Commits: 20, Layouts: 1}}
	if _, err := bisectSim(t, h, newSim(h, 1), options{Resume: st}); err == nil {
		t.Error("resumed a state of another range")
	}
}

// TestSpeculateRuns: measuring the next candidates ahead finds the same
// culprit and leaves the next step's first look already measured.
func TestSpeculateRuns(t *testing.T) {
	h := newHistory(63, map[int]float64{50: math.Log(1.3)}, nil, nil)
	m := newSim(h, 4)
	r, err := bisectSim(t, h, m, options{Speculate: SpeculateRuns})
	if err != nil {
		t.Fatal(err)
	}
	if culpritPos(r, h) != 50 || !r.Found() {
		t.Fatalf("culprit %d, want 50", culpritPos(r, h))
	}
	// Every tested commit after the first was measured a step ahead.
	plain := newSim(h, 4)
	rp, _ := bisectSim(t, h, plain, options{})
	if r.Runs <= rp.Runs {
		t.Errorf("speculation took %d runs, none %d: expected more runs (it measures both next candidates)", r.Runs, rp.Runs)
	}
}

func TestFixedScheme(t *testing.T) {
	h := newHistory(63, map[int]float64{21: math.Log(1.3)}, nil, []int{30})
	m := newSim(h, 1)
	r, err := bisectSim(t, h, m, options{Fixed: 6})
	if err != nil {
		t.Fatal(err)
	}
	if culpritPos(r, h) != 21 || r.Check != nil || !r.Found() {
		t.Fatalf("culprit %d check %v, want 21 without a check", culpritPos(r, h), r.Check)
	}
	// 6 runs per tested commit, ends included.
	if want := 6 * (2 + len(r.Steps) - len(r.Skipped())); r.Runs != want {
		t.Errorf("fixed scheme took %d runs, want %d", r.Runs, want)
	}
}

func TestOptionsErrors(t *testing.T) {
	h := newHistory(5, nil, nil, nil)
	for _, o := range []options{
		{Alpha: 0.7}, {EndRuns: 2}, {MaxRuns: 5}, {CheckRuns: 3}, {Speculate: "sideways"}, {EffectPct: -1}, {StepRuns: 101},
	} {
		if _, err := bisectSim(t, h, newSim(h, 1), o); err == nil {
			t.Errorf("options %+v: no error", o)
		}
	}
	if _, err := search(context.Background(), options{}, h.good, h.path); err == nil {
		t.Error("no measurer: no error")
	}
}

func TestMinRuns(t *testing.T) {
	for _, tc := range []struct {
		alpha   float64
		m, want int
	}{{0.01, 3, 9}, {0.01, 4, 6}, {0.01, 2, 19}, {0.05, 3, 5}} {
		if got := MinRuns(tc.alpha, tc.m); got != tc.want {
			t.Errorf("MinRuns(%v, %d) = %d, want %d", tc.alpha, tc.m, got, tc.want)
		}
	}
	if got := minCheckRuns(0.01); got != 5 {
		t.Errorf("minCheckRuns(0.01) = %d, want 5", got)
	}
}

func TestPick(t *testing.T) {
	b := &bisector{st: &State{}}
	for _, tc := range []struct{ lo, hi, want int }{{-1, 63, 31}, {-1, 1, 0}, {3, 5, 4}, {3, 4, -1}} {
		if got := b.pick(tc.lo, tc.hi); got != tc.want {
			t.Errorf("pick(%d, %d) = %d, want %d", tc.lo, tc.hi, got, tc.want)
		}
	}
	b.st.Result.Steps = []Step{{Index: 31, Verdict: Skip}}
	if got := b.pick(-1, 63); got != 30 {
		t.Errorf("pick with 31 skipped = %d, want 30", got)
	}
	if got := stepsLeft(64); got != 6 {
		t.Errorf("stepsLeft(64) = %d", got)
	}
}

// BenchmarkSimulated reports what the statistical bisection and the fixed
// "git bisect run" schemes spend, and how often they fail to name the
// culprit, on simulated 64-commit histories (one regression, 3 % noise,
// 5 % outliers, slow drift; "bursts" adds bursts of load of +30 % over a
// few runs):
//
//	go test ./internal/bisect -run '^$' -bench Simulated -benchtime 300x
func BenchmarkSimulated(b *testing.B) {
	for _, sc := range []struct {
		name   string
		opt    options
		effect float64
		noise  func(*simMeasurer)
	}{
		{"statistical/30%/quiet", options{}, 1.30, quiet},
		{"fixed6/30%/quiet", options{Fixed: 6}, 1.30, quiet},
		{"statistical/30%/bursts", options{}, 1.30, bursty},
		{"fixed6/30%/bursts", options{Fixed: 6}, 1.30, bursty},
		{"fixed10/30%/bursts", options{Fixed: 10}, 1.30, bursty},
		{"fixed20/30%/bursts", options{Fixed: 20}, 1.30, bursty},
		{"statistical-speculate-runs/30%/quiet", options{Speculate: SpeculateRuns}, 1.30, quiet},
		{"statistical/8%/quiet", options{}, 1.08, quiet},
		{"fixed6/8%/quiet", options{Fixed: 6}, 1.08, quiet},
	} {
		b.Run(sc.name, func(b *testing.B) {
			find, check, extra, wrong := simSchemeExtra(b, b.N, sc.effect, sc.noise, sc.opt)
			b.ReportMetric(find, "find-runs/op")
			b.ReportMetric(check, "check-runs/op")
			b.ReportMetric(extra, "extra-runs/op")
			b.ReportMetric(100*wrong, "%wrong")
		})
	}
}

// mergeSim is a simMeasurer whose history has merge commits.
type mergeSim struct {
	*simMeasurer
	merges map[string]bool
}

func (m mergeSim) IsMerge(ctx context.Context, c gitrev.Commit) (bool, error) {
	return m.merges[c.Hash], nil
}

// TestMergeCulprit: a culprit that is a merge commit (first-parent
// bisection sees a merged branch as one commit) is reported as a merge.
func TestMergeCulprit(t *testing.T) {
	h := newHistory(20, map[int]float64{12: math.Log(1.3)}, nil, nil)
	m := mergeSim{newSim(h, 1), map[string]bool{h.path[12].Hash: true}}
	r, err := search(context.Background(), options{Measurer: m, Metric: "text_ms"}, h.good, h.path)
	if err != nil {
		t.Fatal(err)
	}
	if culpritPos(r, h) != 12 || !r.Merge {
		t.Errorf("culprit %d, merge %v; want 12, a merge", culpritPos(r, h), r.Merge)
	}
}
