// Package job reads perfbot job files: YAML documents that say which
// repository to build, how to build and run its benchmark, which metrics to
// read and how many runs to take. Lists under "params" expand into a matrix
// of atomic jobs, the way lkp-tests job files do.
//
// The smallest job file:
//
//	repo: ../kvstore            # git repository, relative to the job file
//	build:
//	  command: make bench       # run in a worktree of the commit
//	  artifacts: [bench]        # files whose layout matters (the binaries)
//	run:
//	  command: ./bench 20000 1  # run in the same worktree
//	  timeout: 60s
//	runs: 6
//	metrics:
//	  - name: text_ms
//	    regex: 'text_ms: (?P<value>[0-9.]+)'
//	    better: lower           # or higher
//
// A suite (package suite) may stand for run.command and the metrics:
//
//	repo: ../stress-ng
//	build: {command: make -j8}
//	suite: {name: stress-ng, stressor: mutex, ops: 20000, program: ./stress-ng}
//
// Other fields: name (default: the file's base name), build.env,
// build.timeout (default 30m), run.env, run.cpu (auto, none or a CPU
// number; default auto), warmup (default 0), variants, params. A metric has
// exactly one of regex, json (a path such as .results[0].ops_per_sec),
// gobench (true, or a name prefix), builtin (wall, user, sys, maxrss or
// their lkp names) or format (a benchmark program's own output format:
// stress-ng, fio, ...; see metric.FormatNames), and may add from (stdout,
// stderr or a file in the
// worktree), unit and better. better is required for regex and json
// metrics; gobench metrics take it from their units and builtins are
// lower-is-better. Regexes are multi-line: ^ and $ match at line ends.
//
// Params. In "params: {size: [1000, 20000], threads: 4}" a list is a matrix
// axis and a scalar a single value; the atomic jobs are the cartesian
// product, the first param varying slowest, named like "kvstore/size=1000/
// threads=4". In build.command, run.command and every environment value
// (build, run and variant), "${size}" is replaced by the param's value; a
// ${name} that is not a param is left as it is for the shell. In the two
// commands the value is quoted for the shell where it needs it, so that it
// stands for itself (see shell.go; values that need no quoting are spliced
// as they are); environment values take it as it is. Each param is also set
// in the build and run environments as PERFBOT_PARAM_<NAME> (upper case),
// which job files may not set themselves, nor PERFBOT_COMMIT and
// PERFBOT_VARIANT.
//
// Errors. Every problem is a [*SyntaxError] with the file, line and field
// ("jobs/x.yaml:12: run.timeout: invalid duration "6o s""); unknown fields
// are errors, with a suggestion when one is close. [Load] and [Parse] report
// all problems at once in an [ErrorList] and return no job when there is
// any, so nothing runs from a malformed file.
package job

import (
	"time"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/suite"
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
	// Suite is the benchmark suite the job file names (suite:), with its
	// options applied; nil when the file gives run.command itself. The
	// suite's command is Run.Command, and its metrics are in Metrics
	// (after the job's own).
	Suite *suite.Use
	// Params are this atomic job's parameter values (from the matrix). They
	// are already substituted for ${name} in the commands (quoted for the
	// shell where needed) and environment values, and Build.Env and Run.Env already hold them as
	// PERFBOT_PARAM_<NAME>; callers only export those environments.
	Params map[string]string
	// Monitors run beside every measured run ("monitors:"; see
	// monitors.go); none by default.
	Monitors []Monitor
	// Ignore are path globs of changes that cannot matter to the
	// benchmark ("ignore:", as CI systems' paths-ignore; see Ignored): a
	// commit whose diff touches only these is not measured.
	Ignore []string
	// Gate is the pull-request gate's policy ("gate:"; see gate.go).
	Gate Gate
	// Qualify says how a runner is qualified for the gate ("qualify:").
	Qualify Qualify
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
	// Patch, when not empty, is a patch in git's format (the text, not a
	// file name) that package build applies with git apply to the
	// variant's own worktree before the build command runs: triage's
	// source-patch restore. Job files cannot set it.
	Patch string `json:",omitempty"`
}
