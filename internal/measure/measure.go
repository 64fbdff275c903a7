// Package measure is perfbot's one measuring path: it builds each (commit,
// variant) target of a job, plans the runs the store lacks, takes them
// interleaved across targets through an [Executor] (local pinned processes,
// or a queue worker of a fleet), and commits every run to the store as it
// finishes. Compare, triage, bisect and the robots all measure through it.
//
// The phases of [Measure]:
//
//  0. For a job that uses a suite, check that the programs it runs from
//     PATH are installed; a missing one is an error naming its Debian
//     package, before anything is built.
//  1. Build every target (cached by package build); a target that does not
//     build gets its error and no runs. A job that counts instructions
//     with callgrind has each build's count taken now, in runs of their
//     own (callgrind.go), and added to each of its timed runs.
//  2. Plan: read what the store holds and list the runs to take, either
//     whole rounds (Options.WholeRounds: every target once per round, all
//     in one session, so that the runs of a round pair up) or run numbers
//     per target (Target.Runs), in the order of Options.Order. A
//     [Reserver] (a fleet) claims the run numbers first, so that two
//     measurements running at once never take the same run.
//  3. Take the plan, one run at a time, each stored as it finishes, after
//     the job's warm-up runs; a [RoundExecutor] (a fleet) gets the plan
//     cut into rounds, each taken on one machine. With Options.Retry a failed run is replaced
//     within the same measurement (at most [MaxRetries] more passes) unless
//     every run of its target failed in the pass: that target is broken,
//     not flaky.
//
// Runs the store already holds are reused, so an interrupted measurement
// resumes where it stopped. A measurement holds the machine's measuring
// lock ([LockMachine]) while it builds and runs.
package measure

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
)

// MaxRetries is how many more passes a measurement makes to replace runs
// that failed in it.
const MaxRetries = 2

// Target is one commit built under one variant.
type Target struct {
	Commit  gitrev.Commit
	Variant job.Variant
	// Runs is the number of runs of this target to have stored (run
	// numbers From+1..Runs); 0 means Options.Runs, a negative number none
	// (the target is only built and read). Ignored with WholeRounds.
	Runs int
	// From leaves run numbers up to From alone: a measurement of fresh
	// runs after those already stored (a bisection's check) sets it to the
	// highest run number stored.
	From int
}

func (t Target) String() string {
	if t.Variant.Name == "" {
		return t.Commit.Short()
	}
	return t.Commit.Short() + "+" + t.Variant.Name
}

// Progress receives events as the measurement goes on. Implementations must
// not block for long.
type Progress interface {
	// Building is called before each target is built (or found in the cache).
	Building(i, n int, t Target)
	// Built is called after each build, with its error.
	Built(i, n int, t Target, r *build.Result, err error)
	// Ran is called after each stored run; done counts runs taken so far in
	// this measurement, of total planned (retries raise total).
	Ran(done, total int, t Target, r *store.RunRecord)
}

// Builder builds a target; *build.Builder is one.
type Builder interface {
	Build(ctx context.Context, j *job.Job, c gitrev.Commit, v job.Variant) (*build.Result, error)
}

// Options tune a measurement.
type Options struct {
	Store   *store.Store
	Builder Builder
	// Runs is the number of runs per target (default: the job's Runs).
	Runs int
	// CPU pins every run of the default executor to that CPU; -1 for no
	// pinning.
	CPU int
	// Executor takes the runs; nil means Local{CPU: CPU}.
	Executor Executor
	// Order orders the runs; nil means [Balanced].
	Order Order
	// Rand drives Order; nil means a source seeded from the job key.
	Rand     *rand.Rand
	Progress Progress // may be nil
	// KeepFailed keeps stored failed runs as they are; by default a
	// measurement takes them again (the first attempt's logs are kept in a
	// folder beside the new ones).
	KeepFailed bool
	// WholeRounds measures in whole rounds: the runs to compare are Runs
	// rounds in which one session ran every target (Outcome.Rounds). When
	// the store holds fewer (a commit joins a comparison, a session was
	// killed mid-round, a run failed), new rounds of every target are taken
	// under new run numbers; the incomplete rounds stay stored. Without it,
	// run numbers 1..Runs of each target are taken or reused one by one.
	WholeRounds bool
	// Retry replaces runs that fail within this measurement (a comparison
	// wants Runs good rounds). Without it failed runs stay as they are until
	// a later measurement (triage weighs failure rates as evidence).
	Retry bool
	// Wait is told when another perfbot holds the machine's measuring lock
	// (nil: wait silently).
	Wait func(holder string)
	// CallgrindRuns is how many callgrind runs count each build's
	// instructions, for a job that counts them with callgrind (0:
	// CallgrindRuns). With 1 the count is taken unchecked; the default
	// checks that the runs agree.
	CallgrindRuns int
	// Instructions says, for a job that counts instructions with
	// callgrind, which targets (by index) are counted; nil counts every
	// one. The timed runs of the others lack the count (triage: its
	// layout experiments' builds need only the metric triaged).
	Instructions []bool
}

// Outcome is what a measurement produced, per target in the given order.
type Outcome struct {
	Targets []TargetOutcome
	Taken   int    // runs taken now (not reused from the store)
	Session string // the session of the runs taken now
	// Rounds are the run numbers to compare, with Options.WholeRounds: the
	// first Runs rounds in which one session ran every target and every
	// run succeeded, then, when there are too few, the incomplete rounds
	// this measurement took (so that their failures are reported).
	Rounds []int

	st     *store.Store // where the runs are, for Table
	jobKey string
	whole  bool // Options.WholeRounds
}

// TargetOutcome is one target's build and runs.
type TargetOutcome struct {
	Target   Target
	Build    *build.Result
	BuildErr error // wraps build.ErrFailed when the build command failed
	Runs     []store.RunRecord
}

// Measure builds every target and takes the missing runs. A target whose
// build fails gets BuildErr and no runs; the others are measured anyway. An
// error is returned only for failures of perfbot itself or an interruption
// (ctx), after everything finished so far has been stored.
func Measure(ctx context.Context, j *job.Job, targets []Target, opt Options) (*Outcome, error) {
	seen := map[string]int{}
	for i, t := range targets {
		k := t.Commit.Hash + "\x00" + VariantID(t.Variant)
		if first, dup := seen[k]; dup {
			return nil, fmt.Errorf("%s is given twice (as target %d and %d): measuring one commit and variant twice would take the same runs for both", t, first+1, i+1)
		}
		seen[k] = i
	}
	m := newMeasurement(j, targets, opt)
	rx, remote := m.exec.(RoundExecutor)
	if !remote {
		if err := CheckPrograms(j); err != nil {
			return nil, err
		}
	}
	if err := saveJob(ctx, opt.Store, j); err != nil {
		return nil, err
	}
	if !remote {
		release, err := LockMachine(ctx, opt.Wait)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	if err := m.prepare(); err != nil {
		return nil, err
	}

	out := m.out
	if err := m.buildAll(ctx, opt.Builder); err != nil {
		return out, err
	}
	if err := m.countInstructions(ctx, remote); err != nil {
		return out, err
	}

	for pass := 0; pass <= MaxRetries; pass++ {
		st, err := m.load(ctx)
		if err != nil {
			return out, err
		}
		if pass > 0 && (!opt.Retry || !m.retry(st)) {
			break
		}
		plan, err := m.plan(ctx, st)
		if err != nil {
			return out, err
		}
		if len(plan) == 0 {
			break
		}
		if remote {
			if err := m.takeRounds(ctx, rx, plan, pass == 0); err != nil {
				return out, err
			}
			continue
		}
		if pass == 0 {
			if err := m.warmup(ctx, plan); err != nil {
				return out, err
			}
		}
		if err := m.take(ctx, plan); err != nil {
			return out, err
		}
	}

	st, err := m.load(ctx)
	if err != nil {
		return out, err
	}
	if opt.WholeRounds {
		out.Rounds = m.rounds(st)
	}
	for i := range targets {
		if out.Targets[i].Build != nil {
			out.Targets[i].Runs = st.records(i)
		}
	}
	return out, nil
}

// CheckPrograms checks, before anything is built, that the programs a
// job's suite runs from PATH are installed (on the job's run.env PATH when
// it sets one), naming the Debian package of each one that is not.
// Programs the build makes are checked by the run command itself.
func CheckPrograms(j *job.Job) error {
	if j.Suite == nil {
		return nil
	}
	path, ok := j.Run.Env["PATH"]
	if !ok {
		path = os.Getenv("PATH")
	}
	if err := j.Suite.Missing(path); err != nil {
		return fmt.Errorf("%s: %w", j.File, err)
	}
	return nil
}

// BuildErrors joins the build errors of the outcome's targets (nil when
// every target built).
func (o *Outcome) BuildErrors() error {
	var errs []error
	for _, t := range o.Targets {
		if t.BuildErr != nil {
			errs = append(errs, t.BuildErr)
		}
	}
	return errors.Join(errs...)
}
