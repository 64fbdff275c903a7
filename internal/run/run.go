// Package run executes one benchmark run: a fresh process in its own process
// group, optionally pinned to a CPU, killed as a group at its timeout, with
// stdout and stderr written to files and its resource usage measured. It also
// plans the interleaved order of runs across commits and finds the quietest
// CPU.
package run

import (
	"time"

	"github.com/perfbot/perfbot/internal/metric"
)

// Spec is one process to run.
type Spec struct {
	Command    string   // run as: sh -c Command
	Dir        string   // working directory
	Env        []string // full environment ("K=V"); nil means os.Environ()
	Timeout    time.Duration
	CPU        int    // pin to this CPU; -1 for no pinning
	StdoutPath string // created (truncated); required
	StderrPath string // created (truncated); required
}

// Result is what happened to one run.
type Result struct {
	Started  time.Time
	ExitCode int    // -1 when killed by a signal or not started
	Signal   string // e.g. "killed", when the process died of a signal
	TimedOut bool
	Usage    metric.Usage // wall time; user, sys and max RSS of the whole process tree
}
