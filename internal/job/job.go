// Package job reads perfbot job files: YAML documents that say which
// repository to build, how to build and run its benchmark, which metrics to
// read and how many runs to take. Lists under "params" expand into a matrix
// of atomic jobs, the way lkp-tests job files do.
package job

import (
	"time"

	"github.com/perfbot/perfbot/internal/metric"
)

// Job is one atomic job: a job file with every parameter fixed.
type Job struct {
	File string // absolute path of the job file
	Name string // from "name:", else the file's base name without extension
	// Repo is the absolute path of the git repository ("repo:", relative to
	// the job file's directory).
	Repo   string
	Build  Build
	Run    Run
	Runs   int // runs per commit and variant (default 6, at least 3)
	Warmup int // warm-up runs per commit and variant, not recorded as samples
	// Metrics are read from every run, in this order; the builtin resource
	// metrics are always recorded as well.
	Metrics []metric.Spec
	// Variants are the named build variants declared in the job; the
	// default variant "" (plain build) always exists and is not listed.
	Variants []Variant
	// Params are this atomic job's parameter values (from the matrix). They
	// are exported to build and run commands as PERFBOT_PARAM_<NAME> and
	// substituted for ${name} in the commands.
	Params map[string]string
}

// Build says how to build one commit.
type Build struct {
	Command   string            // run with sh -c in the commit's worktree
	Artifacts []string          // files (relative to the worktree) whose layout matters; copied to the cache
	Env       map[string]string // extra environment
	Timeout   time.Duration     // default 30m
}

// Run says how to run the benchmark once.
type Run struct {
	Command string            // run with sh -c in the commit's worktree, after the build
	Timeout time.Duration     // default 10m
	Env     map[string]string // extra environment
	// CPU is "auto" (calibrate and pin to the quietest CPU; the default),
	// "none" (no pinning), or a CPU number.
	CPU string
}

// Variant is a named set of extra build environment and flags. perfbot's
// layout knobs (triage) are variants too.
type Variant struct {
	Name string
	Env  map[string]string
}
