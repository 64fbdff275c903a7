// The gate's flow: relevance, builds, looks, triage.

package gate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"time"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/relevance"
	"github.com/perfbot/perfbot/internal/stats"
)

// identityLevel is the level at which the first look of byte-identical
// builds must show no sign of a change for the gate to stop there, as
// triage's sameProgram does: a change outside the artifacts (a script, a
// data file) sends the gate on to its other looks.
const identityLevel = 0.05

// Run gates the change from cfg.Base to cfg.Head: a diff that touches
// only the job's ignore: paths is unchanged with no run; otherwise both
// revisions are built and measured in balanced interleaved rounds (B H |
// H B) on this runner, look by look (10, 20, 40, ... pairs up to
// max_runs), until every gated metric is decided, the runs are spent or
// the next look would pass max_time; a regression is triaged within what
// is left of max_time. Every run is stored, and stored runs are reused.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	start := time.Now()
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	env, j := cfg.Env, cfg.Job
	if env.Store == nil || env.Repo == nil || env.Builder == nil {
		return nil, errors.New("gate: the environment lacks a store, a repository or a builder")
	}
	s := cfg.settings()
	res := &Result{Job: j.Name, JobKey: j.Key(), File: j.File, ThresholdPct: s.thresholdPct, Alpha: s.alpha,
		MaxRuns: s.maxRuns, MaxTime: s.maxTime, AlignmentPolicy: s.alignment, InconclusivePolicy: s.inconclusive,
		Runner: Runner{Load: math.NaN(), Pinned: -1}}
	defer func() { res.Wall = time.Since(start) }()
	base, errB := env.Repo.Resolve(ctx, cfg.Base)
	head, errH := env.Repo.Resolve(ctx, cfg.Head)
	if err := errors.Join(named("BASE", errB), named("HEAD", errH)); err != nil {
		return nil, err
	}
	res.Base, res.Head = base, head

	// (1) A diff that cannot matter is not measured.
	rel, err := relevance.Check(ctx, env.Repo, j, base.Hash, head.Hash)
	if err != nil {
		return nil, err
	}
	res.Changed = rel.Changed
	if rel.Irrelevant() {
		res.Outcome, res.Reason = Unchanged, rel.Reason()
		return res, nil
	}
	if base.Hash == head.Hash {
		res.Outcome, res.Reason = Unchanged, fmt.Sprintf("BASE and HEAD are the same commit %s", base.Short())
		return res, nil
	}

	// (2), (3) Build and measure, look by look.
	cpu, err := env.Pin(ctx, j, s.maxRuns, s.thresholdPct)
	if err != nil {
		return nil, err
	}
	res.Runner = thisRunner(cpu)
	if env.Remote() {
		res.Runner = Runner{Load: math.NaN(), Pinned: -1}
	}
	if res.Qualification, err = qualification(ctx, env, j.Key(), res.Runner); err != nil {
		return nil, err
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = measure.SeedOf("gate", j.Key(), base.Hash, head.Hash)
	}
	opt := env.Options(cpu)
	opt.WholeRounds, opt.Retry, opt.Rand = true, true, rand.New(rand.NewSource(seed))
	targets := []measure.Target{{Commit: base}, {Commit: head}}
	names, thresholds := cfg.gated(s)

	var design Design
	var rs []Rule
	for n := min(FirstLook, s.maxRuns); ; {
		lookStart := time.Now()
		opt.Runs = n
		out, err := measure.Measure(ctx, j, targets, opt)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("interrupted (%v): every finished run is stored in %s; run the same command again to resume", ctx.Err(), env.Store.Dir())
			}
			return nil, err
		}
		if err := out.BuildErrors(); err != nil {
			return nil, err
		}
		res.NewRuns += out.Taken
		res.Looks++
		if res.Looks == 1 {
			res.Identical = measure.SameArtifacts(j, out.Targets[0].Build, out.Targets[1].Build)
		}
		all, err := readPairs(ctx, env.Store, j, out)
		if err != nil {
			return nil, err
		}
		if rs == nil {
			if rs, err = rules(all, names, thresholds, s.thresholdPct, j.File); err != nil {
				return nil, err
			}
			design = NewDesign(s.alpha, len(rs), s.maxRuns)
			res.Planned = design.Looks
		}
		res.Metrics, res.Pairs = decide(design, rs, all)
		if res.Runner.Machine == "" && len(out.Targets[0].Runs) > 0 {
			res.Runner.Machine = out.Targets[0].Runs[0].Machine
		}
		overall := Overall(gatedOf(res.Metrics))
		// Byte-identical builds are the same program: the first look only
		// checks that nothing outside the artifacts changed.
		if res.Looks == 1 && res.Identical && overall != Regressed && agrees(res.Metrics) {
			res.Outcome = Unchanged
			res.Reason = fmt.Sprintf("the builds' artifacts are byte-identical (%s) and the first look agrees (no sign of a change, p >= %.2g, within half of each threshold)", listArtifacts(j), identityLevel)
			break
		}
		if overall == Regressed {
			res.Outcome = Regression
			break
		}
		if overall == Within {
			res.Outcome = Pass
			break
		}
		next := design.Next(n)
		if next == 0 {
			res.Outcome = Inconclusive
			res.Reason = fmt.Sprintf("the run budget (max_runs %d) is spent", s.maxRuns)
			break
		}
		if out.Taken > 0 {
			// The pace of runs, without the builds of this look (the
			// first look builds both revisions).
			took := time.Since(lookStart)
			for _, t := range out.Targets {
				if t.Build != nil && !t.Build.Cached && t.Build.Record != nil {
					took -= t.Build.Record.Duration
				}
			}
			per := max(took, 0) / time.Duration(out.Taken)
			if eta := time.Since(start) + per*time.Duration(2*(next-n)); eta > s.maxTime {
				res.Outcome = Inconclusive
				res.Reason = fmt.Sprintf("the next look (%d runs each) would end after about %s, beyond the time budget (max_time %s)", next, eta.Round(time.Second), s.maxTime)
				break
			}
		}
		n = next
	}
	if res.Identical && res.Outcome != Unchanged {
		res.Notes = append(res.Notes, fmt.Sprintf("the builds' artifacts are byte-identical (%s): a difference comes from outside them (a script, a data file, the runner)", listArtifacts(j)))
	}

	// (4) A regression is triaged within the time left.
	if res.Outcome == Regression {
		if !s.triage {
			res.Notes = append(res.Notes, "not triaged (--no-triage or gate.triage: false): whether the regression is an alignment artifact is not known")
		} else {
			triageRegression(ctx, cfg, env.Pinned(cpu), res, start.Add(s.maxTime))
		}
	}
	return res, nil
}

// decide decides every metric at this look: the gated ones by their
// rules, the others at the common threshold, shown and not gated. Pairs
// are the fewest pairs of a gated metric.
func decide(d Design, rs []Rule, all []series) ([]Metric, int) {
	var gated, shown []Metric
	pairs := -1
	for _, r := range rs {
		i := slices.IndexFunc(all, func(s series) bool { return s.info.Name == r.Metric })
		var s series
		if i >= 0 {
			s = all[i]
		}
		m := metricOf(d.Decide(r, s.base, s.head), s, true)
		gated = append(gated, m)
		if pairs < 0 || m.Pairs < pairs {
			pairs = m.Pairs
		}
	}
	for _, s := range all {
		if slices.ContainsFunc(rs, func(r Rule) bool { return r.Metric == s.info.Name }) {
			continue
		}
		r := Rule{Metric: s.info.Name, ThresholdPct: rs[0].ThresholdPct, Better: s.info.Better}
		shown = append(shown, metricOf(d.Decide(r, s.base, s.head), s, false))
	}
	return append(gated, shown...), max(pairs, 0)
}

func metricOf(dec Decision, s series, gated bool) Metric {
	m := Metric{Decision: dec, Gated: gated, Unit: s.info.Unit, BaseMedian: math.NaN(), HeadMedian: math.NaN()}
	if len(s.base) > 0 {
		m.BaseMedian, m.HeadMedian = stats.Median(s.base), stats.Median(s.head)
	}
	return m
}

func gatedOf(ms []Metric) []Decision {
	var ds []Decision
	for _, m := range ms {
		if m.Gated {
			ds = append(ds, m.Decision)
		}
	}
	return ds
}

// agrees says whether a first look of identical builds shows no sign of
// a change in any gated metric.
func agrees(ms []Metric) bool {
	for _, m := range ms {
		if m.Gated && !(m.P >= identityLevel && math.Abs(m.Change) < m.ThresholdPct/2) {
			return false
		}
	}
	return true
}

func listArtifacts(j *job.Job) string {
	s := ""
	for i, a := range j.Build.Artifacts {
		if i > 0 {
			s += ", "
		}
		s += a
	}
	return s
}

func named(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
