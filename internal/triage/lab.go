package triage

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/monitor"
	"github.com/perfbot/perfbot/internal/store"
)

// maxSuspects is how many of the layout diff's ranked changes a result
// lists.
const maxSuspects = 5

// storeLab is the real lab: builds with package build, runs with package
// measure, samples from the store, layouts with package layout.
type storeLab struct {
	opt            options
	preset         knobs.Preset
	base, changed  gitrev.Commit
	rng            *rand.Rand
	metric, unit   string
	better         metric.Better
	taken          int                      // runs taken now
	builds         map[string]bool          // build keys used
	newBuilds      int                      // builds made now
	artifacts      map[string]*build.Result // by target key
	restoreChecked map[string]string
	// artifact is the artifact the layout diff read, plain its layout in
	// the base's and the changed commit's plain builds; patchRoot is the
	// root change a source patch can undo, for patchSuspect.
	artifact     string
	plain        [2]*layout.Binary
	patchRoot    layout.PatchRoot
	patchSuspect *layout.Change
}

func newStoreLab(opt options, preset knobs.Preset, base, changed gitrev.Commit) (*storeLab, error) {
	seed := opt.Seed
	if seed == 0 {
		seed = measure.SeedOf("triage", opt.Job.Key(), base.Hash, changed.Hash)
	}
	l := &storeLab{opt: opt, preset: preset, base: base, changed: changed, rng: rand.New(rand.NewSource(seed)),
		builds: map[string]bool{}, artifacts: map[string]*build.Result{}, restoreChecked: map[string]string{}}
	l.metric = opt.Metric
	if l.metric == "" {
		if len(opt.Job.Metrics) == 0 {
			return nil, fmt.Errorf("triage: job %s has no metrics", opt.Job.File)
		}
		l.metric = opt.Job.Metrics[0].Name
	}
	for _, m := range opt.Job.Metrics {
		if m.Name == l.metric {
			l.unit, l.better = m.Unit, m.Better
		}
	}
	return l, nil
}

// stateKey names the triage's question in the store's state table.
func (l *storeLab) stateKey() string {
	o := l.opt
	return fmt.Sprintf("%s/%s/%s/%s/%s/runs=%d/alpha=%g/effect=%g/layouts=%d-%d/r=%d",
		o.Job.Key(), l.base.Hash, l.changed.Hash, l.metric, l.preset.Name(), o.MaxRuns, o.Alpha, o.EffectPct, o.Layouts, o.MaxLayouts, o.LayoutRuns)
}

func (l *storeLab) commit(t target) gitrev.Commit {
	if t.changed {
		return l.changed
	}
	return l.base
}

func (l *storeLab) metricInfo() (string, string, metric.Better) { return l.metric, l.unit, l.better }

func (l *storeLab) forced() job.Variant         { return l.preset.ForcedAlignment() }
func (l *storeLab) layouts(n int) []job.Variant { return l.preset.Layouts(n) }

func (l *storeLab) measure(ctx context.Context, ts []target, n int, whole bool) ([]runVals, []runFails, error) {
	mts := make([]measure.Target, len(ts))
	for i, t := range ts {
		mts[i] = measure.Target{Commit: l.commit(t), Variant: t.variant}
	}
	mopt := l.opt.Env.Options(l.opt.CPU)
	mopt.Runs, mopt.Rand, mopt.WholeRounds = n, l.rng, whole
	// Instruction counts are evidence of the plain comparison's builds
	// only: the layout experiments' builds take no callgrind runs.
	if l.metric != instructionMetric(l.opt.Job) {
		mopt.Instructions = make([]bool, len(ts))
		for i, t := range ts {
			mopt.Instructions[i] = t.setup == plainSetup || t.setup == controlSetup
		}
	}
	out, err := measure.Measure(ctx, l.opt.Job, mts, mopt)
	if out != nil {
		l.taken += out.Taken
	}
	if err != nil {
		return nil, nil, err
	}
	var buildErrs []error
	for i, to := range out.Targets {
		if to.BuildErr != nil {
			buildErrs = append(buildErrs, fmt.Errorf("triage: building %s for %s: %w", to.Target, ts[i], to.BuildErr))
			continue
		}
		if !l.builds[to.Build.Record.Key] && !to.Build.Cached {
			l.newBuilds++
		}
		l.builds[to.Build.Record.Key] = true
		l.artifacts[ts[i].key()] = to.Build
	}
	if err := errors.Join(buildErrs...); err != nil {
		return nil, nil, err
	}
	// Runs are keyed by their pair key: the machine and session that took
	// them, the run number and the target's layout. Whole measurements
	// keep the rounds measure chose (each ran every target in one
	// session); the others runs 1..n of each target.
	keep := make(map[int]bool, n)
	if whole {
		for _, r := range out.Rounds {
			keep[r] = true
		}
	} else {
		for r := 1; r <= n; r++ {
			keep[r] = true
		}
	}
	vals := make([]runVals, len(ts))
	failed := make([]runFails, len(ts))
	for i, t := range ts {
		got, err := l.opt.Env.Store.Samples(ctx, l.opt.Job.Key(), []string{l.commit(t).Hash}, measure.VariantID(t.variant))
		if err != nil {
			return nil, nil, err
		}
		ss := got[l.commit(t).Hash][l.metric]
		cs := make([]compare.Sample, 0, len(ss))
		for _, x := range ss {
			if keep[x.Run] {
				cs = append(cs, compare.Sample{Pair: compare.Pair{Machine: x.Machine, Session: x.Session, Round: x.Run, Layout: t.layout}, Value: x.Value})
			}
		}
		vals[i] = runVals{}
		for _, rv := range compare.PerRun(cs) {
			vals[i][rv.Pair] = rv.Value
		}
		failed[i] = runFails{}
		for _, r := range out.Targets[i].Runs {
			if keep[r.Index] && r.Status != store.RunOK {
				k := compare.Pair{Machine: r.Machine, Session: r.Session, Round: r.Index, Layout: t.layout}
				failed[i][k] = fmt.Sprintf("%s: %s (logs in %s)", r.Status, r.Reason, l.opt.Env.Store.RunDir(r.RunKey))
			}
		}
		if len(vals[i]) == 0 && len(failed[i]) == 0 {
			return nil, nil, l.noMetric(ctx)
		}
	}
	if l.unit == "" && l.better == 0 {
		infos, err := l.opt.Env.Store.Metrics(ctx, l.opt.Job.Key())
		if err != nil {
			return nil, nil, err
		}
		for _, m := range infos {
			if m.Name == l.metric {
				l.unit, l.better = m.Unit, m.Better
			}
		}
	}
	return vals, failed, nil
}

// noMetric explains a metric that no run printed.
func (l *storeLab) noMetric(ctx context.Context) error {
	infos, err := l.opt.Env.Store.Metrics(ctx, l.opt.Job.Key())
	if err != nil {
		return err
	}
	var names []string
	for _, m := range infos {
		names = append(names, m.Name)
	}
	return fmt.Errorf("triage: no run printed metric %q (the job's metrics: %s)", l.metric, strings.Join(names, ", "))
}

// inspect diffs the layouts of the plain builds' first ELF artifact.
func (l *storeLab) inspect(ctx context.Context) (*inspection, error) {
	in := &inspection{}
	b, err := l.opt.Env.Builder.Build(ctx, l.opt.Job, l.base, job.Variant{})
	if err != nil {
		return nil, fmt.Errorf("triage: %w", err)
	}
	c, err := l.opt.Env.Builder.Build(ctx, l.opt.Job, l.changed, job.Variant{})
	if err != nil {
		return nil, fmt.Errorf("triage: %w", err)
	}
	for _, r := range []*build.Result{b, c} {
		if !l.builds[r.Record.Key] && !r.Cached {
			l.newBuilds++
		}
		l.builds[r.Record.Key] = true
	}
	l.artifacts[target{setup: plainSetup}.key()] = b
	l.artifacts[target{changed: true, setup: plainSetup}.key()] = c
	in.identical = sameArtifacts(l.opt.Job, b, c)
	if in.identical {
		in.restoreErr = errors.New("the build artifacts are byte-identical: no symbol moved")
		return in, nil
	}
	var d *layout.DiffResult
	var openErrs []string
	for _, a := range l.opt.Job.Build.Artifacts {
		ba, err := layout.Open(filepath.Join(b.Record.ArtifactDir, a))
		if err != nil {
			openErrs = append(openErrs, fmt.Sprintf("%s: %v", a, err))
			continue
		}
		bc, err := layout.Open(filepath.Join(c.Record.ArtifactDir, a))
		if err != nil {
			openErrs = append(openErrs, fmt.Sprintf("%s: %v", a, err))
			continue
		}
		l.artifact, l.plain = a, [2]*layout.Binary{ba, bc}
		dopt := layout.DiffOptions{NoSource: true}
		// A profile stored beside the changed commit's runs (the job's
		// perf-profile monitor) ranks the suspects by hotness.
		if h, n, err := monitor.CommitProfile(ctx, l.opt.Env.Store, l.opt.Job.Key(), l.changed.Hash, ""); err == nil && n > 0 {
			dopt.Hot = h
			in.notes = append(in.notes, fmt.Sprintf("layout suspects ranked by the perf profile stored with %d runs of %s", n, l.changed.Short()))
		}
		d = layout.Diff(ba, bc, dopt)
		break
	}
	if d == nil {
		in.notes = append(in.notes, "no layout diff: no artifact could be read as a binary ("+strings.Join(openErrs, "; ")+")")
		in.restoreErr = errors.New("no layout diff of the builds")
		// Unknown: code and data may both have moved.
		in.textMoved, in.dataMoved = true, true
		return in, nil
	}
	for _, ch := range d.Ranked {
		if ch.Weight < layout.WeightOff64 {
			continue
		}
		switch ch.B.Kind {
		case layout.Func:
			in.textMoved = true
		case layout.Object:
			in.dataMoved = true
		}
	}
	for _, ch := range d.Ranked {
		if len(in.suspects) == maxSuspects {
			break
		}
		if ch.Weight == layout.WeightNone {
			continue
		}
		in.suspects = append(in.suspects, Suspect{Name: ch.B.Name, Kind: kindName(ch.B.Kind), Section: sectionName(ch.B),
			OffBase: ch.A.Off(layout.LineSize), OffChanged: ch.B.Off(layout.LineSize), Why: why(ch)})
	}
	p, err := layout.ProposePadding(d, "")
	if err != nil {
		in.restoreErr = err
	} else {
		in.padding = p
		in.restore, in.restoreErr = l.preset.Restore(p, knobsDir(l.opt.Env.Store))
		if in.restoreErr == nil {
			in.control = l.control(in.restore)
		}
	}
	// The source patch, for the same suspect: made when the restore
	// experiment first needs it (preparePatch).
	if _, ok := l.preset.(knobs.DebugInfo); !ok {
		in.notes = append(in.notes, fmt.Sprintf("no source patch: the %s preset cannot build with debug information, which places one", l.preset.Name()))
	} else if root, c, err := patchRootOf(d, in.padding); err != nil {
		in.notes = append(in.notes, "no source patch: "+err.Error())
	} else {
		l.patchRoot, l.patchSuspect = root, c
		in.patchable, in.patchKind = true, c.B.Kind
	}
	if in.restoreErr != nil && !in.patchable {
		in.notes = append(in.notes, "no restore experiment: "+in.restoreErr.Error())
	} else if in.restoreErr != nil {
		in.notes = append(in.notes, "no restore padding: "+in.restoreErr.Error()+"; the restore can only use the source patch")
	}
	return in, nil
}

// control returns the unpadded variant of the restore experiment: the
// plain build whose runs get an environment as large as the padded
// build's (PERFBOT_ENV_PAD), so that the padding does not also move the
// stack.
func (l *storeLab) control(restore job.Variant) job.Variant {
	size := func(v job.Variant) int {
		n := 0
		for _, kv := range build.Env(l.opt.Job, l.changed.Hash, v, l.opt.Job.Run.Env) {
			n += len(kv) + 1 + 8 // the string, its NUL and its envp pointer
		}
		return n
	}
	// "control" is as long as knobs.RestoreName, so PERFBOT_VARIANT is too.
	v := job.Variant{Name: "control", Env: map[string]string{knobs.EnvEnvPad: ""}}
	if d := size(restore) - size(v); d > 0 {
		v.Env[knobs.EnvEnvPad] = strings.Repeat("x", d)
	}
	return v
}

func (l *storeLab) sameBuild(a, b target) bool {
	ra, rb := l.artifacts[a.key()], l.artifacts[b.key()]
	if ra == nil || rb == nil {
		return false
	}
	return sameArtifacts(l.opt.Job, ra, rb)
}

// sameArtifacts reports whether two builds' artifacts are identical
// (measure.SameArtifacts: byte for byte or, for ELF files, in what they
// load). Identical artifacts do not prove identical builds (a script or a
// data file may live outside them): callers weigh the runs too.
func sameArtifacts(j *job.Job, a, b *build.Result) bool { return measure.SameArtifacts(j, a, b) }

// checkRestore reads the padded build and says whether the padded symbol
// is back at its old offset.
func (l *storeLab) checkRestore(ctx context.Context, t target, p *layout.Padding) string {
	r := l.artifacts[t.key()]
	if r == nil {
		return ""
	}
	if note, ok := l.restoreChecked[t.key()]; ok {
		return note
	}
	note := ""
	for _, a := range l.opt.Job.Build.Artifacts {
		bin, err := layout.Open(filepath.Join(r.Record.ArtifactDir, a))
		if err != nil {
			continue
		}
		syms := bin.Lookup(p.Symbol)
		if len(syms) != 1 {
			continue
		}
		if off := syms[0].Off(layout.LineSize); off != p.OffA {
			why := "the build does not link the padding first"
			if log, err := os.ReadFile(r.Record.LogPath); err == nil {
				if err := knobs.CheckWrapped(t.variant, log, l.opt.Job.Build.Artifacts); err != nil {
					why = err.Error()
				}
			}
			note = fmt.Sprintf("the restore build has %s at offset %d mod 64, not the base's %d: %s (docs/knobs.md: the %s preset's wrappers pad the link of each artifact)",
				p.Symbol, off, p.OffA, why, l.preset.Name())
		}
		break
	}
	l.restoreChecked[t.key()] = note
	return note
}

func sectionName(s *layout.Symbol) string {
	if s.Section == nil {
		return ""
	}
	return s.Section.Name
}

// why says in a few words what changed about a ranked symbol.
func why(c *layout.Change) string {
	var parts []string
	for _, lc := range c.Loops {
		if lc.Inner() && lc.Changed() && lc.A != nil && lc.B != nil {
			s := fmt.Sprintf("inner loop line offset %d -> %d", lc.A.LineOff, lc.B.LineOff)
			if lc.A.Crosses != lc.B.Crosses {
				if lc.B.Crosses {
					s += ", now crosses a line"
				} else {
					s += ", no longer crosses a line"
				}
			}
			parts = append(parts, s)
			break
		}
	}
	if c.A.Off(32) != c.B.Off(32) {
		parts = append(parts, fmt.Sprintf("offset mod 32 %d -> %d", c.A.Off(32), c.B.Off(32)))
	}
	if c.LinesChanged() {
		parts = append(parts, fmt.Sprintf("lines %d -> %d", c.A.Lines(), c.B.Lines()))
	}
	if c.A.Size != c.B.Size {
		parts = append(parts, fmt.Sprintf("size %d -> %d bytes", c.A.Size, c.B.Size))
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("moved %+d bytes", c.Shift()))
	}
	if c.Source != "" {
		parts = append(parts, c.Source)
	}
	return strings.Join(parts, "; ")
}
