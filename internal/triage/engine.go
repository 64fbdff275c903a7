package triage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
)

// startRuns is the first look of the paired experiments, Pinpoint's.
const startRuns = 10

// fixedRunsPerBuild is the runs per build of the fixed design the budget
// is compared with.
const fixedRunsPerBuild = 10

// setup says what a target's build is, for labels and for the simulator.
type setup int

const (
	plainSetup   setup = iota // the commit as it builds
	alignSetup                // forced alignment
	layoutSetup               // layout k of the sweep (k >= 1; layout 0 is plain)
	controlSetup              // the restore experiment's unpadded builds
	restoreSetup              // the changed commit with the restore padding
)

// target is one build to measure: a commit under a variant.
type target struct {
	changed bool
	setup   setup
	layout  int // layoutSetup only
	variant job.Variant
}

func (t target) String() string {
	s := "base"
	if t.changed {
		s = "changed"
	}
	if t.variant.Name != "" {
		s += "+" + t.variant.Name
	}
	return s
}

// key identifies the target's runs.
func (t target) key() string {
	return fmt.Sprintf("%v/%s/%v", t.changed, t.variant.Name, t.variant.Env)
}

// inspection is what the layout diff of the two plain builds says.
type inspection struct {
	identical bool
	suspects  []Suspect
	// padding is the restore proposal for the top suspect; nil when none.
	padding *layout.Padding
	// restore and control are the restore experiment's variants: the
	// changed commit padded, and both commits unpadded with an environment
	// of the same size; restoreErr says why there are none.
	restore, control job.Variant
	restoreErr       error
	notes            []string
}

// lab builds and measures targets; the real one uses packages build,
// measure and store, the tests a simulator.
type lab interface {
	// measure makes sure every target has n runs and returns each
	// target's metric value by run number, and why each of its failed runs
	// failed, by run number (1..n). With whole, the n runs are whole
	// rounds, each running every target once in one session, so that
	// targets measured earlier (the restore experiment's base) are measured
	// again side by side with new ones; without, runs 1..n of each target
	// are reused one by one (the sweep, whose pairs are per layout).
	measure(ctx context.Context, ts []target, n int, whole bool) (vals []map[int]float64, failed []map[int]string, err error)
	// metricInfo returns the metric triaged, its unit and direction; valid
	// after the first measure.
	metricInfo() (name, unit string, better metric.Better)
	// inspect compares the layouts of the two plain builds.
	inspect(ctx context.Context) (*inspection, error)
	// forced is the forced-alignment variant, layouts the sweep's.
	forced() job.Variant
	layouts(n int) []job.Variant
	// sameBuild reports whether two built targets produced byte-identical
	// artifacts (false when unknown).
	sameBuild(a, b target) bool
	// checkRestore says, after the restore target was built, whether the
	// padding restored the symbol's offset ("" when it did or cannot tell).
	checkRestore(ctx context.Context, t target, p *layout.Padding) string
}

// engine runs the experiments and reaches the verdict.
type engine struct {
	opt   Options
	lab   lab
	state *state
	res   *Result

	used  map[string]int // runs used per target key
	exps  []*Experiment  // in the order they ran; Result.Experiments at the end
	plain *pairedOutcome
	insp  *inspection
	// the latest sweep and the number of layouts it had
	sweep *sweepOutcome
	// attribution outcomes, nil when not run
	forcedOut, restoreOut *pairedOutcome
	// fixedBuilds counts the builds of the fixed design.
	fixedBuilds int
	// byIdentity is true when the verdict rests on byte-identical builds.
	byIdentity bool
	// failure says why the triage stopped: most runs of a build failed.
	failure string
	// runCounts are each target's runs and failed runs at its largest
	// measurement, by target key.
	runCounts map[string]runCount
	// failGap says, when the two commits fail at significantly different
	// rates, by how much ("" when they do not).
	failGap string
}

// runCount is a target's runs and failed runs.
type runCount struct {
	changed      bool
	n            int // runs asked for
	runs, failed int // runs taken, of which failed
	first        string
}

// errFailedRuns stops a triage whose runs mostly fail: what they measured
// cannot answer the question.
type errFailedRuns struct{ reason string }

func (e *errFailedRuns) Error() string { return "triage: " + e.reason }

// pairedOutcome is a paired experiment's decision.
type pairedOutcome struct {
	exp *Experiment
	d   stats.DecisionResult
	// informative is false when the experiment could not show anything
	// (the knob changed nothing in the build).
	informative bool
}

func (p *pairedOutcome) same() bool { return p != nil && p.informative && p.d.Decision == stats.Same }
func (p *pairedOutcome) different() bool {
	return p != nil && p.informative && p.d.Decision == stats.Different
}

// sign is the direction of a paired outcome's estimate: -1, 0 or 1.
func (p *pairedOutcome) sign() int { return signOf(p.d.Comparison.Change) }

// sweepOutcome is the layout sweep's estimate.
type sweepOutcome struct {
	exp     *Experiment
	lc      stats.LayoutComparison
	eq      stats.LayoutComparison // at 1-2*alpha, for the equivalence test
	outcome string                 // "significant", "same", "unclear"
	layouts int
	// canGrow is false when the preset has no more layouts.
	canGrow bool
	// noEffect is true when the knobs did not change the build.
	noEffect bool
}

func signOf(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func (e *engine) logf(format string, args ...any) {
	fmt.Fprintf(e.opt.Log, "triage: "+format+"\n", args...)
}

// run is the decision procedure (see the package doc). A build whose runs
// mostly fail ends it as inconclusive.
func (e *engine) run(ctx context.Context) (*Result, error) {
	e.used = map[string]int{}
	e.runCounts = map[string]runCount{}
	res, err := e.decide(ctx)
	var fr *errFailedRuns
	if errors.As(err, &fr) {
		e.failure = fr.reason
		if e.res.Metric == "" {
			e.res.Metric, e.res.Unit, e.res.Better = e.lab.metricInfo()
		}
		if e.plain == nil {
			e.res.Change = math.NaN()
		}
		return e.finish(Inconclusive), nil
	}
	return res, err
}

// decide runs the experiments until the verdict is clear.
func (e *engine) decide(ctx context.Context) (*Result, error) {
	r := e.res

	// 1. The layout diff of the two plain builds (no runs), then the plain
	// comparison: one look only when the builds' artifacts are
	// byte-identical.
	var err error
	if e.insp, err = e.lab.inspect(ctx); err != nil {
		return nil, err
	}
	r.Identical, r.Suspects = e.insp.identical, e.insp.suspects
	r.Notes = append(r.Notes, e.insp.notes...)
	if e.insp.padding != nil {
		r.Padding = strings.TrimSpace(e.insp.padding.Instructions())
	}
	e.plain, err = e.paired(ctx, "plain", "the two commits as they build",
		[]target{{setup: plainSetup}, {changed: true, setup: plainSetup}},
		[]string{"base", "changed"}, 1, e.insp.identical)
	if err != nil {
		return nil, err
	}
	r.Metric, r.Unit, r.Better = e.lab.metricInfo()
	r.Change = e.plain.d.Comparison.Change
	e.fixedBuilds = 4 + 2*(len(e.lab.layouts(e.opt.Layouts))-1)
	if e.insp.restoreErr == nil && e.insp.padding != nil {
		e.fixedBuilds += 3
	}
	if err := e.save(ctx, "plain", nil); err != nil {
		return nil, err
	}
	if e.insp.identical {
		if e.plain.d.Decision != stats.Different {
			// Only the first look's runs: the verdict rests on the builds.
			e.byIdentity = true
			return e.finish(NoChange), nil
		}
		// The runs see a change the artifacts do not: it lives elsewhere.
		r.Notes = append(r.Notes, fmt.Sprintf("the build artifacts (%s) are byte-identical, yet the plain comparison shows %+.1f%% (%s): "+
			"the change lives outside build.artifacts (a script, a data file, a library the benchmark loads) or the machine changed between runs; "+
			"the triage goes on as for different builds", artifactList(e.opt.Job), e.plain.d.Comparison.Change, e.plain.d.Reason))
	}

	// 2. The layout sweep.
	if err := e.runSweep(ctx, e.opt.Layouts); err != nil {
		return nil, err
	}
	plainChange := e.plain.different()
	attributed := false
	for {
		sw := e.sweep
		switch {
		case sw == nil || sw.noEffect:
			// No sweep possible, or the build ignores the knobs: only the
			// other experiments can decide.
		case sw.outcome == "significant":
			return e.finishReal(), nil
		case sw.outcome == "same" && !plainChange:
			return e.finish(NoChange), nil
		}
		if plainChange && !attributed {
			// 3-4. Attribution, once: does a layout-equalising rebuild
			// remove the plain change?
			attributed = true
			v, err := e.attribute(ctx)
			if err != nil {
				return nil, err
			}
			if v != "" {
				return e.finish(v), nil
			}
		}
		if !plainChange && e.forcedOut == nil {
			// Forced alignment is one more layout, cheaper than doubling
			// the sweep: no change in the plain build and none there is
			// no change.
			if err := e.runForced(ctx); err != nil {
				return nil, err
			}
			if e.plain.d.Decision == stats.Same && e.forcedOut.same() {
				return e.finish(NoChange), nil
			}
		}
		if sw == nil || sw.noEffect || sw.outcome == "same" || !sw.canGrowTo(e.opt.MaxLayouts) {
			break
		}
		if err := e.runSweep(ctx, 2*sw.layouts); err != nil {
			return nil, err
		}
	}
	return e.finish(Inconclusive), nil
}

// artifactList names a job's artifacts for a note.
func artifactList(j *job.Job) string {
	if j == nil || len(j.Build.Artifacts) == 0 {
		return "none listed"
	}
	return strings.Join(j.Build.Artifacts, ", ")
}

// canGrowTo reports whether a larger sweep is possible.
func (s *sweepOutcome) canGrowTo(most int) bool {
	return s.canGrow && 2*s.layouts <= most && !s.noEffect
}

// attribute runs forced alignment and the restore experiment, in the order
// the top suspect suggests, and returns the alignment verdict of the first
// that explains the plain change ("" when neither does).
func (e *engine) attribute(ctx context.Context) (Verdict, error) {
	dataFirst := e.insp.padding != nil && e.insp.padding.Kind == layout.Object && e.insp.restoreErr == nil
	steps := []string{"forced", "restore"}
	if dataFirst {
		steps = []string{"restore", "forced"}
	}
	for _, s := range steps {
		switch s {
		case "forced":
			if err := e.runForced(ctx); err != nil {
				return "", err
			}
			if e.forcedOut.same() {
				return TextAlignment, nil
			}
		case "restore":
			if e.insp.padding == nil || e.insp.restoreErr != nil {
				continue
			}
			if err := e.runRestore(ctx); err != nil {
				return "", err
			}
			if e.restoreOut.same() {
				if e.insp.padding.Kind == layout.Func {
					return TextAlignment, nil
				}
				return DataAlignment, nil
			}
		}
	}
	return "", nil
}

func (e *engine) runForced(ctx context.Context) error {
	v := e.lab.forced()
	out, err := e.paired(ctx, "forced-alignment", "both commits rebuilt with functions and loops aligned to 64 bytes ("+v.Name+")",
		[]target{{setup: alignSetup, variant: v}, {changed: true, setup: alignSetup, variant: v}},
		[]string{"base+" + v.Name, "changed+" + v.Name}, 1, false)
	if err != nil {
		return err
	}
	if e.lab.sameBuild(target{changed: true, setup: plainSetup}, target{changed: true, setup: alignSetup, variant: v}) {
		out.informative = false
		out.exp.Reason = "the forced-alignment build is byte-identical to the plain build: the build ignores the preset's knobs (" + v.Name + ")"
		e.res.Notes = append(e.res.Notes, out.exp.Reason)
	}
	e.forcedOut = out
	return e.save(ctx, "forced-alignment", nil)
}

func (e *engine) runRestore(ctx context.Context) error {
	p := e.insp.padding
	ts := []target{
		{setup: controlSetup, variant: e.insp.control},
		{changed: true, setup: controlSetup, variant: e.insp.control},
		{changed: true, setup: restoreSetup, variant: e.insp.restore},
	}
	title := fmt.Sprintf("the changed commit rebuilt with %d bytes of padding in %s, restoring %s's offset %d mod 64 (it is at %d)",
		p.Bytes, p.Section, p.Symbol, p.OffA, p.OffB)
	out, err := e.paired(ctx, "restore", title, ts, []string{"base", "changed", "changed+padding"}, 2, false)
	if err != nil {
		return err
	}
	if note := e.lab.checkRestore(ctx, ts[2], p); note != "" {
		out.informative = false
		out.exp.Reason = note
		e.res.Notes = append(e.res.Notes, note)
	}
	e.restoreOut = out
	return e.save(ctx, "restore", nil)
}

// schedule returns the looks of the paired experiments: 10, 20, 40, ...
// and MaxRuns last.
func (e *engine) schedule() []int {
	return e.decideOptions().Schedule()
}

func (e *engine) decideOptions() stats.DecideOptions {
	return stats.DecideOptions{Alpha: e.opt.Alpha, MinEffect: e.opt.MinEffect / 100, StartN: startRuns, MaxN: e.opt.MaxRuns}
}

// paired runs an adaptive paired experiment: every look measures all
// targets to the next point of the schedule, and stats.Decide compares
// ts[main] with ts[0]; it stops when the answer is known, or at MaxRuns.
// With once, it looks only once. Either way it looks again while the
// failed runs hint at a difference they do not yet show (failsUnsettled).
// When most runs of a build fail, the experiment is kept with outcome
// "failed" and an *errFailedRuns returned.
func (e *engine) paired(ctx context.Context, name, title string, ts []target, labels []string, main int, once bool) (*pairedOutcome, error) {
	out := &pairedOutcome{informative: true}
	var vals []map[int]float64
	var failed []map[int]string
	looks, runs := 0, 0
	stop := ""
	for _, n := range e.schedule() {
		var err error
		if vals, failed, err = e.measure(ctx, ts, n, true); err != nil {
			return nil, err
		}
		looks, runs = looks+1, n
		if stop = mostFailed(name, labels, vals, failed); stop != "" {
			e.logf("%s: %d runs each: %s", name, n, stop)
			break
		}
		a, b := pairs(vals[0], vals[main])
		out.d = stats.Decide(a, b, true, e.decideOptions())
		e.logf("%s: %d runs each: %s (%s)", name, n, out.d.Decision, out.d.Reason)
		if err := e.save(ctx, fmt.Sprintf("%s, %d runs", name, n), nil); err != nil {
			return nil, err
		}
		if n == e.opt.MaxRuns {
			break
		}
		if (once || out.d.Decision != stats.Unknown) && !failsUnsettled(len(failed[0]), len(failed[0])+len(vals[0]), len(failed[main]), len(failed[main])+len(vals[main])) {
			break
		}
	}
	c := out.d.Comparison
	exp := &Experiment{Name: name, Title: title, Runs: runs, Outcome: out.d.Decision.String(),
		Change: c.Change, Lo: c.Lo, Hi: c.Hi, P: c.P, Confidence: c.Confidence, Looks: looks, Reason: out.d.Reason}
	exp.Columns, exp.Table = e.columns(ts, labels, vals, failed)
	out.exp = exp
	if stop != "" {
		exp.Outcome, exp.Reason = "failed", stop
		exp.Change, exp.Lo, exp.Hi, exp.P = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		e.exps = append(e.exps, exp)
		return nil, &errFailedRuns{stop}
	}
	e.exps = append(e.exps, exp)
	return out, nil
}

// triageStep names an experiment in a sentence.
func triageStep(name string) string {
	switch name {
	case "plain":
		return "the plain comparison"
	case "layout-sweep":
		return "the layout sweep"
	case "forced-alignment":
		return "the forced-alignment experiment"
	case "restore":
		return "the restore experiment"
	}
	return name
}

// mostFailed says which build of experiment name, if any, failed in most
// of its runs, or kept fewer than two runs with a value because of
// failures; "" when none did.
func mostFailed(name string, labels []string, vals []map[int]float64, failed []map[int]string) string {
	for i := range vals {
		f, v := len(failed[i]), len(vals[i])
		if f > 0 && (2*f > f+v || v < 2) {
			return fmt.Sprintf("in %s, %d of %d runs of %s failed (first: %s)", triageStep(name), f, f+v, labels[i], firstReason(failed[i]))
		}
	}
	return ""
}

// firstReason is the reason of the failed run with the lowest number.
func firstReason(failed map[int]string) string {
	first := 0
	for r := range failed {
		if first == 0 || r < first {
			first = r
		}
	}
	return failed[first]
}

// failAlpha is the level of the test that two commits fail at different
// rates.
const failAlpha = 0.05

// failNote compares the two commits' failed runs over every build of the
// triage: a note when any run failed, and whether the rates differ
// (Fisher's exact test, one-sided in the direction seen, at failAlpha). A
// change that makes the benchmark fail (or stop failing) is a change,
// whatever the timings of the runs that passed say.
func (e *engine) failNote() (note, gap string) {
	var f, n [2]int
	var first [2]string
	keys := make([]string, 0, len(e.runCounts))
	for k := range e.runCounts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := e.runCounts[k]
		side := 0
		if c.changed {
			side = 1
		}
		f[side] += c.failed
		n[side] += c.runs
		if first[side] == "" && c.failed > 0 {
			first[side] = c.first
		}
	}
	if f[0]+f[1] == 0 || n[0] == 0 || n[1] == 0 {
		return "", ""
	}
	more, less := 1, 0
	if float64(f[0])/float64(n[0]) > float64(f[1])/float64(n[1]) {
		more, less = 0, 1
	}
	name := [2]string{"base", "changed"}
	p := fisherGreater(f[more], n[more], f[less], n[less])
	counts := fmt.Sprintf("%s fails in %d of %d runs, %s in %d of %d", name[more], f[more], n[more], name[less], f[less], n[less])
	note = fmt.Sprintf("failed runs: %s fails in %d of %d runs (first: %s), %s in %d of %d (Fisher's exact test p=%.2g)",
		name[more], f[more], n[more], first[more], name[less], f[less], n[less], p)
	if p < failAlpha {
		return note + ": the builds differ in whether the benchmark completes, which the timings of the runs that passed do not show", counts
	}
	return note + ": too few to tell the commits apart; failed runs are left out of the timings", ""
}

// failsUnsettled reports whether two builds' failures hint at different
// rates without showing them: the one-sided p-value in the direction seen
// is at least failAlpha, and under 1/2 or one build never failed.
func failsUnsettled(fa, na, fb, nb int) bool {
	if fa+fb == 0 || na == 0 || nb == 0 {
		return false
	}
	p := fisherGreater(fb, nb, fa, na)
	if float64(fa)/float64(na) > float64(fb)/float64(nb) {
		p = fisherGreater(fa, na, fb, nb)
	}
	return p >= failAlpha && (p < 0.5 || (fa == 0) != (fb == 0))
}

// fisherGreater is the one-sided p-value of Fisher's exact test that a
// group with fa failures in na runs fails more often than one with fb in
// nb: the chance, with the failures dealt at random among all runs, that
// the first group gets fa or more.
func fisherGreater(fa, na, fb, nb int) float64 {
	total, fails := na+nb, fa+fb
	lchoose := func(n, k int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		c, _ := math.Lgamma(float64(n - k + 1))
		return a - b - c
	}
	p := 0.0
	for x := fa; x <= min(fails, na); x++ {
		if fails-x > nb {
			continue
		}
		p += math.Exp(lchoose(fails, x) + lchoose(total-fails, na-x) - lchoose(total, na))
	}
	return min(p, 1)
}

// runSweep measures the first n layouts and estimates the change across
// them.
func (e *engine) runSweep(ctx context.Context, n int) error {
	vs := e.lab.layouts(n)
	if len(vs) < 2 {
		e.res.Notes = append(e.res.Notes, "no layout sweep: the preset has no layout knob")
		e.sweep = nil
		return nil
	}
	var ts []target
	for k, v := range vs {
		s := layoutSetup
		if v.Name == "" {
			s = plainSetup
		}
		ts = append(ts, target{setup: s, layout: k, variant: v}, target{changed: true, setup: s, layout: k, variant: v})
	}
	r := e.opt.LayoutRuns
	vals, failed, err := e.measure(ctx, ts, r, false)
	if err != nil {
		return err
	}
	bs, cs := make([][]float64, len(vs)), make([][]float64, len(vs))
	exp := &Experiment{Name: "layout-sweep", Runs: r,
		Title: fmt.Sprintf("both commits built under %d layouts that move code, data and stack (the plain build and %s..%s)", len(vs), vs[1].Name, vs[len(vs)-1].Name)}
	for k, v := range vs {
		bs[k], cs[k] = upTo(vals[2*k], r), upTo(vals[2*k+1], r)
		row := LayoutRow{Variant: v.Name, Base: stats.Median(bs[k]), Changed: stats.Median(cs[k]), N: min(len(bs[k]), len(cs[k]))}
		if row.Variant == "" {
			row.Variant = "(plain)"
		}
		row.Change = pctChange(row.Base, row.Changed)
		exp.Layouts = append(exp.Layouts, row)
	}
	// The sweep's table: the plain layout's columns and each commit's
	// layout medians are in exp.Layouts; the table holds all runs of each
	// commit across layouts (unpaired).
	var sideVals []map[int]float64
	var sideFailed []map[int]string
	exp.Columns, exp.Table, sideVals, sideFailed = e.sweepColumns(ts, vals, failed, r)
	exp.Looks = 1
	if e.sweep != nil {
		exp.Looks = e.sweep.exp.Looks + 1
	}
	// Replace an earlier sweep: the latest one holds all its layouts.
	e.exps = slices.DeleteFunc(e.exps, func(x *Experiment) bool { return x.Name == "layout-sweep" })
	e.exps = append(e.exps, exp)
	sideLabels := []string{"base", "changed"}
	if stop := mostFailed("layout-sweep", sideLabels, sideVals, sideFailed); stop != "" {
		exp.Outcome, exp.Reason = "failed", stop
		exp.Change, exp.Lo, exp.Hi, exp.P = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		e.logf("layout sweep: %d layouts x %d runs: %s", len(vs), r, stop)
		return &errFailedRuns{stop}
	}

	sw := &sweepOutcome{layouts: len(vs), canGrow: len(e.lab.layouts(2*len(vs))) > len(vs)}
	sw.lc = stats.CompareLayouts(bs, cs, e.opt.Alpha)
	sw.eq = stats.CompareLayouts(bs, cs, 2*e.opt.Alpha)
	bound := e.opt.MinEffect
	switch {
	case sw.lc.Layouts >= 2 && sw.lc.Significant:
		sw.outcome = "significant"
		exp.Reason = fmt.Sprintf("across %d layouts the change is %+.1f%% (%.0f%% CI %+.1f%% to %+.1f%%), p=%.3g < %v", sw.lc.Layouts, sw.lc.Change, 100*(1-e.opt.Alpha), sw.lc.Lo, sw.lc.Hi, sw.lc.P, e.opt.Alpha)
	case sw.eq.Layouts >= 2 && sw.eq.Lo > -bound && sw.eq.Hi < bound:
		sw.outcome = "same"
		exp.Reason = fmt.Sprintf("across %d layouts the %.0f%% interval of the change [%+.1f%%, %+.1f%%] lies within ±%g%%", sw.eq.Layouts, 100*(1-2*e.opt.Alpha), sw.eq.Lo, sw.eq.Hi, bound)
	default:
		sw.outcome = "unclear"
		exp.Reason = fmt.Sprintf("across %d layouts the change is %+.1f%% (%.0f%% CI %+.1f%% to %+.1f%%, p=%.3g): neither significant nor within ±%g%%", sw.lc.Layouts, sw.lc.Change, 100*(1-e.opt.Alpha), sw.lc.Lo, sw.lc.Hi, sw.lc.P, bound)
	}
	if e.lab.sameBuild(ts[1], ts[3]) {
		sw.noEffect = true
		sw.outcome = "uninformative"
		note := fmt.Sprintf("the layout builds are byte-identical to the plain build (%s): the build ignores the preset's knobs, so the sweep says nothing", vs[1].Name)
		exp.Reason = note
		e.res.Notes = append(e.res.Notes, note)
	}
	exp.Outcome = sw.outcome
	exp.Change, exp.Lo, exp.Hi, exp.P, exp.Confidence = sw.lc.Change, sw.lc.Lo, sw.lc.Hi, sw.lc.P, 1-e.opt.Alpha
	e.logf("layout sweep: %d layouts x %d runs: %s (%s)", len(vs), r, sw.outcome, exp.Reason)
	sw.exp = exp
	e.sweep = sw
	if sw.noEffect {
		e.res.Robust = nil
		return e.save(ctx, fmt.Sprintf("layout sweep, %d layouts", len(vs)), nil)
	}
	e.res.Robust = &Robust{Layouts: sw.lc.Layouts, Change: sw.lc.Change, Lo: sw.lc.Lo, Hi: sw.lc.Hi, P: sw.lc.P,
		Confidence: 1 - e.opt.Alpha, Significant: sw.lc.Significant,
		SensitivityBase: sw.lc.SensitivityBase, SensitivityChanged: sw.lc.SensitivityChanged,
		LayoutP: sw.lc.LayoutP, WithinCV: sw.lc.WithinCV}
	return e.save(ctx, fmt.Sprintf("layout sweep, %d layouts", len(vs)), nil)
}

// measure measures the targets to n runs and counts the runs used.
func (e *engine) measure(ctx context.Context, ts []target, n int, whole bool) ([]map[int]float64, []map[int]string, error) {
	vals, failed, err := e.lab.measure(ctx, ts, n, whole)
	if err != nil {
		return nil, nil, err
	}
	for i, t := range ts {
		if len(vals[i]) == 0 && len(failed[i]) == 0 {
			return nil, nil, fmt.Errorf("triage: no run of %s printed %s", t, e.metricName())
		}
		e.used[t.key()] = max(e.used[t.key()], n)
		if c, ok := e.runCounts[t.key()]; !ok || n >= c.n {
			e.runCounts[t.key()] = runCount{changed: t.changed, n: n, runs: len(vals[i]) + len(failed[i]), failed: len(failed[i]), first: firstReason(failed[i])}
		}
	}
	return vals, failed, nil
}

func (e *engine) metricName() string {
	if name, _, _ := e.lab.metricInfo(); name != "" {
		return name
	}
	return "the metric"
}

// finishReal returns the real-change verdict of a significant sweep.
func (e *engine) finishReal() *Result {
	worse := (e.sweep.lc.Change > 0) == (e.res.Better != metric.HigherIsBetter)
	if worse {
		return e.finish(RealRegression)
	}
	return e.finish(RealImprovement)
}

// finish fills in the verdict, sentence, disagreement and budget. Builds
// that fail at different rates are never "no change".
func (e *engine) finish(v Verdict) *Result {
	r := e.res
	note, gap := e.failNote()
	if note != "" {
		r.Notes = append(r.Notes, note)
	}
	if v == NoChange && gap != "" {
		v = Inconclusive
		e.byIdentity = false
	}
	e.failGap = gap
	r.Verdict = v
	r.Experiments = nil
	for _, x := range e.exps {
		r.Experiments = append(r.Experiments, *x)
	}
	for _, n := range e.used {
		r.Runs += n
	}
	r.FixedRuns = fixedRunsPerBuild * e.fixedBuilds
	r.Disagreement = e.disagreement()
	r.Sentence = e.sentence()
	if v == Inconclusive {
		r.Notes = append(r.Notes, e.settle()...)
	}
	e.logf("verdict: %s: %s", v, r.Sentence)
	return r
}

// disagreement says how the plain comparison and the layout-robust
// estimate differ, or "".
func (e *engine) disagreement() string {
	sw, p := e.sweep, e.plain
	if sw == nil || sw.noEffect || p == nil {
		return ""
	}
	pc := p.d.Comparison
	plainTxt := fmt.Sprintf("the plain comparison shows %+.1f%% (%s)", pc.Change, p.d.Decision)
	robustTxt := fmt.Sprintf("across %d layouts the change is %+.1f%% (CI %+.1f%% to %+.1f%%)", sw.lc.Layouts, sw.lc.Change, sw.lc.Lo, sw.lc.Hi)
	switch {
	case sw.outcome == "significant" && p.d.Decision != stats.Different:
		return plainTxt + " but " + robustTxt + ": an alignment change hides the real change in the plain build"
	case sw.outcome == "significant" && p.sign() != signOf(sw.lc.Change):
		return plainTxt + " but " + robustTxt + ": an alignment change reverses the real change in the plain build"
	case sw.outcome == "significant" && (pc.Change < sw.lc.Lo || pc.Change > sw.lc.Hi):
		return plainTxt + ", outside the interval across layouts (" + robustTxt + "): alignment adds to the real change in the plain build"
	case sw.outcome != "significant" && p.d.Decision == stats.Different:
		return plainTxt + " but " + robustTxt + ", not significant: the plain change does not survive other layouts"
	}
	return ""
}

// columns summarises each target's runs and builds the 0-day table, with
// its failed runs (lkp's fail:runs row).
func (e *engine) columns(ts []target, labels []string, vals []map[int]float64, failed []map[int]string) ([]Column, *compare.Table) {
	cols := make([]Column, len(ts))
	tcols := make([]compare.Column, len(ts))
	series := compare.Series{Metric: e.metricName(), KPI: true, Samples: make([][]compare.Sample, len(ts))}
	_, series.Unit, series.Better = e.lab.metricInfo()
	for i, t := range ts {
		commit := e.res.Base
		if t.changed {
			commit = e.res.Changed
		}
		v := sortedValues(vals[i])
		cols[i] = Column{Label: labels[i], Commit: commit.Hash, Variant: t.variant.Name, N: len(v), Failed: len(failed[i]), Median: stats.Median(v)}
		if i > 0 {
			cols[i].Change = pctChange(cols[0].Median, cols[i].Median)
		}
		tcols[i] = compare.Column{ID: commit.Hash, Subject: commit.Subject, Variant: t.variant.Name,
			Runs: len(v) + len(failed[i]), Failed: len(failed[i])}
		if t.setup == restoreSetup {
			tcols[i].Variant = "padding"
		} else if t.setup == controlSetup {
			tcols[i].Variant = ""
		}
		series.Samples[i] = samples(vals[i])
	}
	return cols, compare.Build(tcols, []compare.Series{series}, true, e.opt.Alpha)
}

// sweepColumns summarises the sweep: each commit's runs (and failed runs)
// over all layouts, which it also returns.
func (e *engine) sweepColumns(ts []target, vals []map[int]float64, failed []map[int]string, r int) ([]Column, *compare.Table, []map[int]float64, []map[int]string) {
	all := make([]map[int]float64, 2)
	allFailed := make([]map[int]string, 2)
	for side := range 2 {
		all[side], allFailed[side] = map[int]float64{}, map[int]string{}
		for i := side; i < len(ts); i += 2 {
			// Number runs by layout so that layouts pair up.
			for run, v := range vals[i] {
				if run <= r {
					all[side][(i/2)*r+run] = v
				}
			}
			for run, why := range failed[i] {
				if run <= r {
					allFailed[side][(i/2)*r+run] = why
				}
			}
		}
	}
	layoutsTs := []target{{}, {changed: true}}
	cols, t := e.columns(layoutsTs, []string{"base (all layouts)", "changed (all layouts)"}, all, allFailed)
	for i := range t.Columns {
		t.Columns[i].Variant = "layouts"
	}
	return cols, t, all, allFailed
}

// pairs returns the values of the runs both sides have, by run number.
func pairs(a, b map[int]float64) (x, y []float64) {
	runs := make([]int, 0, len(a))
	for r := range a {
		if _, ok := b[r]; ok {
			runs = append(runs, r)
		}
	}
	sort.Ints(runs)
	for _, r := range runs {
		x = append(x, a[r])
		y = append(y, b[r])
	}
	return x, y
}

func upTo(m map[int]float64, n int) []float64 {
	var out []float64
	for _, r := range sortedRuns(m) {
		if r <= n {
			out = append(out, m[r])
		}
	}
	return out
}

func sortedRuns(m map[int]float64) []int {
	runs := make([]int, 0, len(m))
	for r := range m {
		runs = append(runs, r)
	}
	sort.Ints(runs)
	return runs
}

func sortedValues(m map[int]float64) []float64 {
	var out []float64
	for _, r := range sortedRuns(m) {
		out = append(out, m[r])
	}
	return out
}

func samples(m map[int]float64) []compare.Sample {
	var out []compare.Sample
	for _, r := range sortedRuns(m) {
		out = append(out, compare.Sample{Pair: compare.Pair{Round: r}, Value: m[r]})
	}
	return out
}

func pctChange(base, x float64) float64 {
	if base == 0 {
		return math.NaN()
	}
	return 100 * (x - base) / base
}
