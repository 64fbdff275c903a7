package triage

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/metric"
)

// simModel is a benchmark whose truth is known: log run time = code effect
// (changed commit only) + the effect of the hot code's 16-byte class in its
// 64-byte line + that of the hot data's class + noise. The changed commit
// moves code by textShift and data by dataShift classes; layout k moves
// both by k classes; forced alignment puts the hot code of both commits in
// the class aligned; the restore padding gives the changed commit the
// base's class of what it pads.
type simModel struct {
	code                 float64
	textShift, dataShift int
	text, data           [4]float64
	baseText, baseData   int
	aligned              int
	noise                float64 // sd of the log noise
	outliers             float64 // share of runs 1.3x slower (a busy host)
	identical            bool
	// artifactsIdentical makes the artifacts byte-identical whatever the
	// change: the change lives in a file the job does not list.
	artifactsIdentical bool
	// failBase and failChanged are the shares of runs of each commit that
	// crash.
	failBase, failChanged float64
	// knobsIgnored makes every variant build the plain binary (a build
	// that ignores the preset); restoreBroken makes the restore padding
	// miss its symbol.
	knobsIgnored, restoreBroken bool
	// alignMiss is what forced alignment leaves of the changed commit's
	// code shift, in classes (0: it aligns the hot code of both commits
	// alike).
	alignMiss int
	// trace, when set, is the log noise of consecutive real runs (see
	// simnoise_test.go), taken in order from a random start and scaled by
	// traceScale; noise and outliers are then unused.
	trace      []float64
	traceScale float64
}

// simLab measures a simModel the way package measure does: whole rounds
// (every target once per round, one session, new rounds under new run
// numbers when the stored ones are incomplete) or run numbers 1..n of each
// target, failed runs taken again; every measurement is a new session.
type simLab struct {
	m        simModel
	rng      *rand.Rand
	runs     map[string]map[int]simRun // by target key and run number
	taken    int
	sessions int
	// noiseAt is the next position in the model's noise trace.
	noiseAt int
}

// simRun is one stored run.
type simRun struct {
	session string
	value   float64
	fail    string
}

func newSimLab(m simModel, seed int64) *simLab {
	s := &simLab{m: m, rng: rand.New(rand.NewSource(seed)), runs: map[string]map[int]simRun{}}
	if len(m.trace) > 0 {
		s.noiseAt = s.rng.Intn(len(m.trace))
	}
	return s
}

// noise is the log noise of the next run: the next residual of the
// model's trace of real runs (scaled), else normal noise with outliers.
func (s *simLab) noise() float64 {
	m := s.m
	if len(m.trace) > 0 {
		x := m.trace[s.noiseAt%len(m.trace)]
		s.noiseAt++
		return m.traceScale * x
	}
	x := m.noise * s.rng.NormFloat64()
	if s.rng.Float64() < m.outliers {
		x += math.Log(1.3)
	}
	return x
}

func (s *simLab) value(t target) float64 {
	m := s.m
	tc, dc := m.baseText, m.baseData
	if t.changed {
		tc += m.textShift
		dc += m.dataShift
	}
	setup := t.setup
	if m.knobsIgnored || (setup == restoreSetup && m.restoreBroken) {
		setup = plainSetup
	}
	switch setup {
	case alignSetup:
		tc = m.aligned
		if t.changed {
			tc += m.alignMiss
		}
	case layoutSetup:
		tc += t.layout
		dc += t.layout
	case restoreSetup:
		if s.padKind() == layout.Func {
			tc = m.baseText
		} else {
			dc = m.baseData
		}
	}
	x := m.text[mod4(tc)] + m.data[mod4(dc)] + s.noise()
	if t.changed {
		x += m.code
	}
	return 10 * math.Exp(x)
}

func mod4(x int) int { return ((x % 4) + 4) % 4 }

func (s *simLab) padKind() layout.Kind {
	if mod4(s.m.textShift) != 0 {
		return layout.Func
	}
	return layout.Object
}

// take runs target t as run r of session.
func (s *simLab) take(t target, r int, session string) {
	rate := s.m.failBase
	if t.changed {
		rate = s.m.failChanged
	}
	s.taken++
	run := simRun{session: session}
	if rate > 0 && s.rng.Float64() < rate {
		run.fail = "crashed: killed by signal SIGSEGV"
	} else {
		run.value = s.value(t)
	}
	s.runs[t.key()][r] = run
}

// complete lists the run numbers at which every target has a good run, all
// of one session.
func (s *simLab) complete(ts []target) []int {
	var out []int
	for r, r0 := range s.runs[ts[0].key()] {
		ok := r0.fail == ""
		for _, t := range ts[1:] {
			x, found := s.runs[t.key()][r]
			ok = ok && found && x.fail == "" && x.session == r0.session
		}
		if ok {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

func (s *simLab) measure(_ context.Context, ts []target, n int, whole bool) ([]runVals, []runFails, error) {
	s.sessions++
	session := fmt.Sprintf("sim-%d", s.sessions)
	for _, t := range ts {
		if s.runs[t.key()] == nil {
			s.runs[t.key()] = map[int]simRun{}
		}
	}
	var keep []int
	if whole {
		keep = s.complete(ts)
		if need := n - len(keep); need > 0 {
			top := 0
			for _, t := range ts {
				for r := range s.runs[t.key()] {
					top = max(top, r)
				}
			}
			for r := top + 1; r <= top+need; r++ {
				for _, i := range s.rng.Perm(len(ts)) {
					s.take(ts[i], r, session)
				}
			}
			keep = s.complete(ts)
			// Too few complete rounds: this measurement's incomplete ones
			// show the failures.
			for r := top + 1; r <= top+need && len(keep) < n; r++ {
				if !slices.Contains(keep, r) {
					keep = append(keep, r)
				}
			}
		}
		keep = keep[:min(n, len(keep))]
	} else {
		for r := 1; r <= n; r++ {
			keep = append(keep, r)
			for _, i := range s.rng.Perm(len(ts)) {
				if x, ok := s.runs[ts[i].key()][r]; !ok || x.fail != "" {
					s.take(ts[i], r, session)
				}
			}
		}
	}
	out := make([]runVals, len(ts))
	failed := make([]runFails, len(ts))
	for i, t := range ts {
		out[i], failed[i] = runVals{}, runFails{}
		for _, r := range keep {
			x, ok := s.runs[t.key()][r]
			if !ok {
				continue
			}
			k := compare.Pair{Machine: "sim", Session: x.session, Round: r, Layout: t.layout}
			if x.fail != "" {
				failed[i][k] = x.fail
			} else {
				out[i][k] = x.value
			}
		}
	}
	return out, failed, nil
}

func (s *simLab) metricInfo() (string, string, metric.Better) {
	return "t_ms", "ms", metric.LowerIsBetter
}

func (s *simLab) inspect(context.Context) (*inspection, error) {
	m := s.m
	in := &inspection{identical: m.artifactsIdentical || (m.identical && m.code == 0 && m.textShift == 0 && m.dataShift == 0)}
	if in.identical || (mod4(m.textShift) == 0 && mod4(m.dataShift) == 0) {
		in.restoreErr = fmt.Errorf("nothing moved")
		return in, nil
	}
	p := &layout.Padding{Symbol: "hot_data", Kind: layout.Object, Section: ".bss", Bytes: uint64(16 * mod4(-m.dataShift)),
		OffA: uint64(16 * mod4(m.baseData)), OffB: uint64(16 * mod4(m.baseData+m.dataShift))}
	if s.padKind() == layout.Func {
		p = &layout.Padding{Symbol: "hot_loop", Kind: layout.Func, Section: ".text", Bytes: uint64(16 * mod4(-m.textShift)),
			OffA: uint64(16 * mod4(m.baseText)), OffB: uint64(16 * mod4(m.baseText+m.textShift))}
	}
	in.padding = p
	in.suspects = []Suspect{{Name: p.Symbol, Kind: SuspectKind(p.Kind.String()), Section: p.Section, OffBase: p.OffA, OffChanged: p.OffB}}
	in.restore = job.Variant{Name: "restore", Env: map[string]string{"PAD": "1"}}
	in.control = job.Variant{Name: "control", Env: map[string]string{"PAD": ""}}
	return in, nil
}

func (s *simLab) forced() job.Variant {
	return job.Variant{Name: "align64", Env: map[string]string{"ALIGN": "64"}}
}

func (s *simLab) layouts(n int) []job.Variant {
	n = min(n, 16)
	out := []job.Variant{{}}
	for k := 1; k < n; k++ {
		out = append(out, job.Variant{Name: fmt.Sprintf("layout%d", k), Env: map[string]string{"K": fmt.Sprint(k)}})
	}
	return out
}

func (s *simLab) sameBuild(a, b target) bool {
	return s.m.knobsIgnored && a.changed == b.changed
}

func (s *simLab) checkRestore(_ context.Context, _ target, p *layout.Padding) string {
	if s.m.restoreBroken || s.m.knobsIgnored {
		return "the restore build has " + p.Symbol + " elsewhere"
	}
	return ""
}

// simTriage runs the decision procedure on a model.
func simTriage(t testing.TB, m simModel, seed int64) (*Result, *simLab) {
	t.Helper()
	opt, err := Options{Log: io.Discard}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	lab := newSimLab(m, seed)
	e := &engine{opt: opt, lab: lab, res: &Result{
		Base:    gitrev.Commit{Hash: strings.Repeat("a", 40)},
		Changed: gitrev.Commit{Hash: strings.Repeat("b", 40)},
	}}
	res, err := e.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res.NewRuns = lab.taken
	return res, lab
}

// scenario draws a model whose truth is want.
type scenario struct {
	name  string
	want  Verdict
	model func(r *rand.Rand) simModel
}

// base draws the parts every scenario shares: noise of 1 % to 4 % with a
// few outliers, random starting classes, no layout effect.
func simBase(r *rand.Rand) simModel {
	return simModel{noise: 0.01 + 0.03*r.Float64(), outliers: 0.03, baseText: r.Intn(4), baseData: r.Intn(4), aligned: r.Intn(4)}
}

// slowClass makes one class of four slow by factor f.
func slowClass(c int, f float64) [4]float64 {
	var e [4]float64
	e[mod4(c)] = math.Log(f)
	return e
}

var scenarios = []scenario{
	{"identical builds", NoChange, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.identical = true
		return m
	}},
	{"code moved, no effect anywhere", NoChange, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.textShift = 1 + r.Intn(3)
		return m
	}},
	{"code moved, other offsets slow", NoChange, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.textShift = 2
		// The two commits' classes are fast; the other two are slow, so
		// layouts spread the figure but the change is none.
		m.text = slowClass(m.baseText+1, 1.3)
		m.text[mod4(m.baseText+3)] = math.Log(1.3)
		return m
	}},
	{"text alignment artifact", TextAlignment, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.textShift = 1 + r.Intn(3)
		m.aligned = m.baseText + 1 + r.Intn(3) // any class; both commits share it
		// The changed commit's class is slow, the base's is not.
		m.text = slowClass(m.baseText+m.textShift, 1.2+0.3*r.Float64())
		return m
	}},
	{"data alignment artifact", DataAlignment, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.dataShift = 1 + 2*r.Intn(2) // 16 or 48 bytes: flips the offset mod 32
		f := math.Log(1.2 + 0.3*r.Float64())
		for c := range 4 {
			if mod4(c-m.baseData)%2 == 1 {
				m.data[c] = f // the classes 16 mod 32 from the base's are slow
			}
		}
		return m
	}},
	{"real regression, nothing moved", RealRegression, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = math.Log(1.15 + 0.25*r.Float64())
		return m
	}},
	{"real regression, code moved", RealRegression, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = math.Log(1.25 + 0.1*r.Float64())
		m.textShift = 1 + r.Intn(3)
		m.text = slowClass(r.Intn(4), 1.1)
		return m
	}},
	{"small real regression, noisy host", RealRegression, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.noise = 0.02 + 0.03*r.Float64()
		m.outliers = 0.08
		m.code = math.Log(1.10 + 0.05*r.Float64())
		return m
	}},
	{"real improvement", RealImprovement, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = -math.Log(1.15 + 0.25*r.Float64())
		return m
	}},
	{"real regression hidden by alignment", RealRegression, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = math.Log(1.2)
		m.textShift = 1
		m.text = slowClass(m.baseText, 1.2) // the base was slow, the changed commit moved out of it
		return m
	}},
	{"real regression hidden, strong layout effect", RealRegression, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = math.Log(1.3)
		m.textShift = 1
		m.text = slowClass(m.baseText, 1.43)
		return m
	}},
}

// TestSimulatedErrorRates runs the decision procedure on many simulated
// cases of known truth (issue 4: "the false-positive and false-negative
// rates over many simulated cases must stay under 5 %"): a real verdict
// where the change is not real is a false positive, anything else where it
// is real a false negative; each scenario's own verdict must be right in
// at least 90 % of its cases, and never the opposite direction.
func TestSimulatedErrorRates(t *testing.T) {
	cases := 200
	if testing.Short() {
		cases = 60
	}
	var realN, realMiss, notRealN, falseReal int
	for si, sc := range scenarios {
		r := rand.New(rand.NewSource(int64(1000 + si)))
		counts := map[Verdict]int{}
		runs := 0
		for i := range cases {
			m := sc.model(r)
			res, _ := simTriage(t, m, int64(si*100000+i))
			counts[res.Verdict]++
			runs += res.Runs
			if sc.want.Real() {
				realN++
				if !res.Verdict.Real() {
					realMiss++
				}
				if res.Verdict.Real() && res.Verdict != sc.want {
					t.Errorf("%s: case %d: verdict %s, the opposite direction (%s)", sc.name, i, res.Verdict, res.Sentence)
				}
			} else {
				notRealN++
				if res.Verdict.Real() {
					falseReal++
				}
			}
		}
		right := float64(counts[sc.want]) / float64(cases)
		t.Logf("%-38s want %-16s right %5.1f%%  %v  mean runs %.0f", sc.name, sc.want, 100*right, counts, float64(runs)/float64(cases))
		if right < 0.90 {
			t.Errorf("%s: right verdict in %.1f%% of %d cases, want >= 90%% (%v)", sc.name, 100*right, cases, counts)
		}
	}
	fp := float64(falseReal) / float64(notRealN)
	fn := float64(realMiss) / float64(realN)
	t.Logf("false positives %d/%d = %.1f%%, false negatives %d/%d = %.1f%%", falseReal, notRealN, 100*fp, realMiss, realN, 100*fn)
	if fp >= 0.05 {
		t.Errorf("false-positive rate %.1f%%, want < 5%%", 100*fp)
	}
	if fn >= 0.05 {
		t.Errorf("false-negative rate %.1f%%, want < 5%%", 100*fn)
	}
}

// TestSimulatedPaths checks the sentences and notes of particular paths.
func TestSimulatedPaths(t *testing.T) {
	quiet := simModel{noise: 0.01, baseText: 1, baseData: 0, aligned: 0}

	t.Run("hidden regression: the plain comparison disagrees", func(t *testing.T) {
		m := quiet
		m.code = math.Log(1.2)
		m.textShift = 1
		m.text = slowClass(m.baseText, 1.2)
		res, _ := simTriage(t, m, 1)
		if res.Verdict != RealRegression || res.Disagreement == "" || !strings.Contains(res.Sentence, "The plain comparison disagrees") {
			t.Errorf("verdict %s, disagreement %q, sentence %q; want a real regression whose sentence says the plain comparison disagrees", res.Verdict, res.Disagreement, res.Sentence)
		}
		if res.Robust == nil || res.Robust.Lo <= 0 {
			t.Errorf("robust estimate %+v: want an interval above 0", res.Robust)
		}
	})

	t.Run("build ignores the knobs: never a verdict from the sweep", func(t *testing.T) {
		m := quiet
		m.dataShift = 1
		for c := range 4 {
			if mod4(c-m.baseData)%2 == 1 {
				m.data[c] = math.Log(1.4)
			}
		}
		m.knobsIgnored = true
		res, _ := simTriage(t, m, 2)
		if res.Verdict != Inconclusive {
			t.Fatalf("verdict %s (%s), want inconclusive: the layouts are all the plain build", res.Verdict, res.Sentence)
		}
		notes := strings.Join(res.Notes, "\n")
		if !strings.Contains(notes, "ignores the preset's knobs") || !strings.Contains(notes, "--preset") {
			t.Errorf("notes do not say the build ignores the knobs and what to do:\n%s", notes)
		}
	})

	t.Run("restore misses, forced alignment keeps the change: inconclusive with advice", func(t *testing.T) {
		m := quiet
		m.dataShift = 1
		for c := range 4 {
			if mod4(c-m.baseData)%2 == 1 {
				m.data[c] = math.Log(1.4)
			}
		}
		m.restoreBroken = true
		res, _ := simTriage(t, m, 3)
		if res.Verdict != Inconclusive {
			t.Fatalf("verdict %s (%s), want inconclusive", res.Verdict, res.Sentence)
		}
		if !strings.Contains(res.Sentence, "did not restore") || len(res.Notes) == 0 {
			t.Errorf("sentence %q, notes %q: want the failed restore and what would settle it", res.Sentence, res.Notes)
		}
		for _, x := range res.Experiments {
			if x.Name == "layout-sweep" && len(x.Layouts) != 16 {
				t.Errorf("the sweep stopped at %d layouts; it should grow to 16 before giving up", len(x.Layouts))
			}
		}
	})

	t.Run("identical builds: one look, no sweep", func(t *testing.T) {
		m := quiet
		m.identical = true
		res, lab := simTriage(t, m, 4)
		if res.Verdict != NoChange || len(res.Experiments) != 1 || lab.taken != 20 || !strings.Contains(res.Sentence, "byte-identical") {
			t.Errorf("verdict %s, %d experiments, %d runs, %q; want no-change after 10 pairs", res.Verdict, len(res.Experiments), lab.taken, res.Sentence)
		}
	})

	t.Run("budget: runs counted once per build", func(t *testing.T) {
		m := quiet
		m.code = math.Log(1.3)
		res, lab := simTriage(t, m, 5)
		if res.Runs != lab.taken {
			t.Errorf("Runs = %d, the lab took %d", res.Runs, lab.taken)
		}
		if res.FixedRuns != 100 {
			t.Errorf("FixedRuns = %d, want 100 (plain, forced and 3 layouts per commit, 10 runs each; no restore: nothing moved)", res.FixedRuns)
		}
	})
}
