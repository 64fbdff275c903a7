// The entry point: a Config in, a Result out.

package bisect

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/knobs"
	runner "github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/triage"
)

var errNoEnv = errors.New("bisect: Config.Env needs a Store, a Repo and a Builder")

// Run bisects the first-parent history from cfg.Good (exclusive) to
// cfg.Bad: it checks cfg ([Config.Check]), resolves the revisions and the
// path between them, builds the mode's variants, pins the runs
// (measure.Env.Pin), resumes the saved state of the same bisection (or
// forgets it, with Restart), searches, triages the culprits when the
// bisection is plain (not Fixed, not NoTriage), and returns the result
// with the check's table. Errors: those of [Config.Check] and of the
// revisions, naming the flag; a [NoCulpritError] wrapping [ErrNoChange];
// [ErrWrongDirection] and [ErrEndFailed] (each with the figures, and with
// a partial Result); failures of the measurer; and, when interrupted, an
// error wrapping ctx's that says the state is saved.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	env, j := cfg.Env, cfg.Job
	if env.Store == nil || env.Repo == nil || env.Builder == nil {
		return nil, errNoEnv
	}
	logf := func(l string) {
		if env.Logf != nil {
			env.Logf("bisect: %s", l)
		}
	}
	ref, err := j.ResolveMetric(cfg.Metric)
	if err != nil {
		return nil, err
	}
	if cfg.Metric == "" {
		logf(fmt.Sprintf("metric %s (the job's first)", ref.Name))
	}
	good, path, err := firstParentPath(ctx, env.Repo, cfg.Good, cfg.Bad)
	if err != nil {
		return nil, err
	}
	mode := cfg.mode()
	var preset knobs.Preset
	if mode != Plain || cfg.triages() {
		if preset, err = knobs.LookupIn(cfg.preset(), filepath.Join(env.Store.Dir(), "knobs")); err != nil {
			return nil, fmt.Errorf("--preset: %w", err)
		}
	}
	layouts := cfg.Layouts
	if layouts == 0 {
		layouts = DefaultLayouts
	}
	variants, detail, err := mode.Variants(preset, layouts)
	if err != nil {
		return nil, err
	}
	settings := cfg.settings()
	cpu, err := env.Pin(ctx, j, max(cfg.Runs, 6), settings.EffectPct)
	if err != nil {
		return nil, err
	}
	spec := cfg.Speculate
	switch spec {
	case "":
		spec = DefaultSpeculate
	case SpeculateAuto:
		spec = AutoSpeculation(cpu, len(runner.Allowed()))
	}

	// The saved state of the same bisection, if any.
	key := cfg.StateKey
	if key == "" {
		key = StateKey(j, good.Hash, path[len(path)-1].Hash, ref.Name, variants, settings)
	}
	resume, err := LoadState(ctx, env.Store, key, cfg.Restart)
	if err != nil {
		return nil, err
	}
	if resume != nil {
		logf("resuming the saved bisection " + key)
	}

	m := &StoreMeasurer{Job: j, Store: env.Store, Builder: env.Builder, Executor: env.Executor, Repo: env.Repo, Metric: ref.Name,
		Variants: variants, CPU: cpu, Progress: env.Progress, Log: logf}
	if cfg.Seed != 0 {
		m.Rand = rand.New(rand.NewSource(cfg.Seed))
	}
	defer m.Wait()
	opt := options{
		Measurer: m, Metric: ref.Name, Better: ref.Better, Improvement: cfg.Improvement,
		Alpha: cfg.Alpha, EffectPct: cfg.EffectPct,
		EndRuns: cfg.Runs, StepRuns: cfg.StepRuns, MaxRuns: cfg.MaxRuns, CheckRuns: cfg.CheckRuns,
		Fixed: cfg.Fixed, Speculate: spec, Parallel: cfg.Parallel, Resume: resume, Save: SaveState(env.Store, key), Log: logf,
		MaxCulprits: cfg.MaxCulprits, ExtraRuns: cfg.ExtraRuns, FirstParentOnly: cfg.FirstParentOnly, Graph: GitGraph{Repo: env.Repo},
		Relevance: JobRelevance(env.Repo, j),
	}
	if cfg.triages() {
		opt.Triage = triageWith(cfg.Triage, triage.Config{Env: env.Pinned(cpu), Job: j, Metric: ref.Name, Preset: preset.Name()})
	}
	res, err := search(ctx, opt, good, path)
	if res != nil {
		res.Mode, res.ModeDetail = mode, detail
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return res, fmt.Errorf("bisect interrupted (%w); the state is saved: run the same command again to resume", err)
	case errors.Is(err, ErrNoChange):
		return res, &NoCulpritError{err}
	case err != nil:
		return res, err
	}
	if res.Culprit != nil && res.Check != nil {
		if res.Table, err = checkTable(ctx, env.Store, j, res, variants); err != nil {
			// The report stands without its table.
			res.Notes = append(res.Notes, "the check's table cannot be shown: "+err.Error())
		}
	}
	return res, nil
}

// triageWith is the search's triage of a culprit against its parent:
// run (triage.Run when nil) with cfg and the two commits.
func triageWith(run func(context.Context, triage.Config) (*triage.Result, error), cfg triage.Config) func(ctx context.Context, parent, culprit gitrev.Commit) (*Triage, error) {
	if run == nil {
		run = triage.Run
	}
	return func(ctx context.Context, parent, culprit gitrev.Commit) (*Triage, error) {
		c := cfg
		c.Base, c.Changed = parent.Hash, culprit.Hash
		res, err := run(ctx, c)
		if err != nil {
			return nil, err
		}
		return &Triage{Verdict: res.Verdict, Sentence: res.Sentence}, nil
	}
}

// firstParentPath resolves the revisions and the first-parent path
// between them, with errors that say which flag is wrong.
func firstParentPath(ctx context.Context, repo *gitrev.Repo, goodRev, badRev string) (gitrev.Commit, []gitrev.Commit, error) {
	good, errG := repo.Resolve(ctx, goodRev)
	bad, errB := repo.Resolve(ctx, badRev)
	if errG != nil || errB != nil {
		var errs []error
		if errG != nil {
			errs = append(errs, fmt.Errorf("--good: %w", errG))
		}
		if errB != nil {
			errs = append(errs, fmt.Errorf("--bad: %w", errB))
		}
		return good, nil, errors.Join(errs...)
	}
	if good.Hash == bad.Hash {
		return good, nil, fmt.Errorf("--good %s and --bad %s are the same commit %s: nothing to bisect", goodRev, badRev, good.Short())
	}
	path, err := repo.FirstParentPath(ctx, good.Hash, bad.Hash)
	if err == nil {
		return good, path, nil
	}
	if _, rerr := repo.FirstParentPath(ctx, bad.Hash, good.Hash); rerr == nil {
		return good, nil, fmt.Errorf("--good %s (%s) comes after --bad %s (%s) in the history: the revisions are swapped; --good must be the older commit",
			goodRev, good.Short(), badRev, bad.Short())
	}
	return good, nil, fmt.Errorf("--good %s (%s) and --bad %s (%s): %v; bisect follows the first-parent history, so --good must be a first-parent ancestor of --bad (try their merge base)",
		goodRev, good.Short(), badRev, bad.Short(), err)
}
