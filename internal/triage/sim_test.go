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
	// noPatch: the layout diff names no root change a source patch can
	// undo (a reordering, a shift from another section); patchBroken:
	// the patched build does not get the layout back, so it is not
	// measured. padResidue is the log effect of the restore padding on
	// the padded build beyond the suspect's offset (the padding moves
	// everything else in the section); the source patch has none.
	noPatch, patchBroken bool
	padResidue           float64
	// patchIdentical: the commit's only change to the build is the
	// layout shift (an unused object removed), so the patched build loads
	// the base's bytes when code is 0. script is a real log effect outside
	// the artifacts (a script or data file the commit changed), present
	// in every build of the changed commit, the patched one included.
	patchIdentical bool
	script         float64
	// dataBlind hides the data shift from the layout diff (an object it
	// cannot see: an anonymous constant, the heap).
	dataBlind bool
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
	// A source patch changes the source: it reaches builds that ignore
	// the knobs.
	if (m.knobsIgnored && setup != patchSetup) || (setup == restoreSetup && m.restoreBroken) {
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
	case restoreSetup, patchSetup:
		if s.padKind() == layout.Func {
			tc = m.baseText
		} else {
			dc = m.baseData
		}
	}
	x := m.text[mod4(tc)] + m.data[mod4(dc)] + s.noise()
	if setup == restoreSetup {
		x += m.padResidue
	}
	if t.changed {
		x += m.code + m.script
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
	in.textMoved = !in.identical && mod4(m.textShift) != 0
	in.dataMoved = !in.identical && mod4(m.dataShift) != 0 && !m.dataBlind
	if !in.textMoved && !in.dataMoved {
		in.restoreErr = fmt.Errorf("nothing moved")
		return in, nil
	}
	text := &layout.Padding{Symbol: "hot_loop", Kind: layout.Func, Section: ".text", Bytes: uint64(16 * mod4(-m.textShift)),
		OffA: uint64(16 * mod4(m.baseText)), OffB: uint64(16 * mod4(m.baseText+m.textShift))}
	data := &layout.Padding{Symbol: "hot_data", Kind: layout.Object, Section: ".bss", Bytes: uint64(16 * mod4(-m.dataShift)),
		OffA: uint64(16 * mod4(m.baseData)), OffB: uint64(16 * mod4(m.baseData+m.dataShift))}
	for _, p := range []*layout.Padding{text, data} {
		if (p == text && in.textMoved) || (p == data && in.dataMoved) {
			in.suspects = append(in.suspects, Suspect{Name: p.Symbol, Kind: SuspectKind(p.Kind.String()), Section: p.Section, OffBase: p.OffA, OffChanged: p.OffB})
		}
	}
	in.padding = data
	if in.textMoved {
		in.padding = text
	}
	in.restore = job.Variant{Name: "restore", Env: map[string]string{"PAD": "1"}}
	in.control = job.Variant{Name: "control", Env: map[string]string{"PAD": ""}}
	in.patchable, in.patchKind = !m.noPatch, in.padding.Kind
	return in, nil
}

func (s *simLab) sourcePatch(context.Context) (*srcPatch, error) {
	kind := s.padKind()
	sym := "hot_data"
	if kind == layout.Func {
		sym = "hot_loop"
	}
	p := &srcPatch{kind: kind, symbol: sym, ok: !s.m.patchBroken, identical: !s.m.patchBroken && s.m.patchIdentical && s.m.code == 0,
		variant: job.Variant{Name: patchName, Env: map[string]string{"PAD": ""}, Patch: "diff --git a/x.c b/x.c\n"},
		control: job.Variant{Name: "control", Env: map[string]string{"PAD": ""}},
		info:    &SourcePatch{Root: "removed x (.bss)", Suspect: sym, File: "x.c", Line: 3, Section: ".bss", Bytes: 16, Exact: true, Restored: !s.m.patchBroken}}
	if s.m.patchBroken {
		p.info.Check = "not restored: .bss: 0 of 3 symbols from the spot on are back at their base address"
	}
	return p, nil
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
	return simTriageLog(t, m, seed, io.Discard)
}

// simTriageLog is simTriage with the engine's log lines written to w.
func simTriageLog(t testing.TB, m simModel, seed int64, w io.Writer) (*Result, *simLab) {
	t.Helper()
	opt := options{Config: Config{Log: w}.withDefaults(), CPU: -1}
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
