package measure

import (
	"context"
	"strconv"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
)

// Env is where a pipeline builds and measures: the seams that this
// machine (a [Session]) and a fleet both provide. Every pipeline's Config
// (compare, triage, bisect, sensitivity, watch) takes one, so that the
// command line, the dashboard and the fleet server run the same pipeline
// over different machines.
type Env struct {
	Store *store.Store
	Repo  *gitrev.Repo
	// Builder builds the commits: a *build.Builder on this machine, or a
	// fleet's, which builds on the machines of a class.
	Builder Builder
	// Executor takes the runs. nil is this machine: a [Local] executor
	// pinned as CPU says. A fleet's is a [RoundExecutor].
	Executor Executor
	// CPU is this machine's pinning: "auto" (the quietest CPU), "none" or
	// a CPU number; "" is the job's run.cpu. Ignored with a RoundExecutor.
	CPU string
	// Progress receives the builds and runs (nil: none).
	Progress Progress
	// Logf receives the pipeline's diagnostic lines (nil: none).
	Logf func(format string, args ...any)
	// Wait is told when another perfbot holds this machine's measuring
	// lock (nil: wait silently).
	Wait func(holder string)
}

// Env is the session's machine: its store, repository and builder, runs
// on this machine pinned as cpu says ("" the job's run.cpu).
func (s *Session) Env(cpu string, p Progress, logf func(format string, args ...any), wait func(holder string)) Env {
	return Env{Store: s.Store, Repo: s.Repo, Builder: s.Builder, CPU: cpu, Progress: p, Logf: logf, Wait: wait}
}

// Remote says whether the runs are taken elsewhere (a fleet).
func (e Env) Remote() bool {
	_, ok := e.Executor.(RoundExecutor)
	return ok
}

// Pin chooses the CPU that the runs of job j are pinned to on this machine
// (-1: none), by Env.CPU, else the job's run.cpu: see [ChooseCPU]; runs
// and effectPct tell it which noise to warn about. Remote runs are never
// pinned here: -1, and nothing is calibrated.
func (e Env) Pin(ctx context.Context, j *job.Job, runs int, effectPct float64) (int, error) {
	if e.Remote() {
		return -1, nil
	}
	return ChooseCPU(ctx, CPUMode(e.CPU, j), runs, effectPct, e.logf)
}

// Options are the measurement options of the environment with runs
// pinned to cpu (from Pin); the caller sets the rest.
func (e Env) Options(cpu int) Options {
	return Options{Store: e.Store, Builder: e.Builder, CPU: cpu, Executor: e.Executor, Progress: e.Progress, Wait: e.Wait}
}

func (e Env) logf(format string, args ...any) {
	if e.Logf != nil {
		e.Logf(format, args...)
	}
}

// Pinned is the environment with its runs pinned to cpu, a choice Pin
// made (-1: not pinned): a pipeline that runs another (bisect its
// triages) passes it on, so that the CPU is not chosen twice.
func (e Env) Pinned(cpu int) Env {
	e.CPU = "none"
	if cpu >= 0 {
		e.CPU = strconv.Itoa(cpu)
	}
	return e
}
