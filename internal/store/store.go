// Package store keeps everything perfbot measures: builds, runs and their
// samples, in an embedded SQLite database (modernc.org/sqlite, WAL mode)
// under a .perfbot folder, with each run's raw logs in a result tree beside
// it. Every run is committed as soon as it finishes, so a killed perfbot
// loses at most the run in flight and a re-run resumes from what is stored.
//
// A run is identified by [RunKey]: (job key, commit, variant, run number).
// That makes a run a pure function of its key, so a job queue can later hand
// out keys and the store deduplicates.
package store

import (
	"errors"
	"time"

	"github.com/perfbot/perfbot/internal/metric"
)

// ErrNotFound is returned when a looked-up record does not exist.
var ErrNotFound = errors.New("not found")

// Build statuses.
const (
	BuildOK     = "ok"
	BuildFailed = "failed"
)

// BuildRecord is one build of one commit under one variant.
type BuildRecord struct {
	// Key identifies the build: a hash of the commit, the build command,
	// the artifacts and the variant's environment (computed by package build).
	Key         string
	Commit      string // full hash
	Variant     string // "" for the plain build
	Status      string // BuildOK or BuildFailed
	ArtifactDir string // where the artifacts were copied
	LogPath     string // the build's combined output
	Error       string // for failed builds: why
	Started     time.Time
	Duration    time.Duration
}

// RunKey identifies one run.
type RunKey struct {
	Job     string // job key: a hash of the atomic job's measured parts (see job.Key)
	Commit  string // full hash
	Variant string // "" for the plain build
	Index   int    // run number, 1-based; warm-ups are not stored
}

// Run statuses. Everything but RunOK is a failed run; failed runs are kept
// and reported, never averaged in.
const (
	RunOK       = "ok"
	RunCrashed  = "crashed"   // non-zero exit or killed by a signal
	RunTimeout  = "timeout"   // killed at the job's timeout
	RunNoMetric = "no-metric" // exited 0 but a metric was missing or unreadable
	RunError    = "error"     // perfbot could not start it
)

// RunRecord is one finished run and its samples.
type RunRecord struct {
	RunKey
	Status     string
	Reason     string // for failed runs: why, in one line
	CPU        int    // the CPU it was pinned to, -1 when not pinned
	Started    time.Time
	Usage      metric.Usage
	ExitCode   int
	StdoutPath string
	StderrPath string
	// Values holds every metric value read from the run, the builtin
	// resource metrics included. A metric may have several values per run
	// (a Go benchmark run with -count); their order is kept.
	Values []metric.Value
}

// Sample is one stored value of one metric.
type Sample struct {
	Run   int // RunKey.Index
	Value float64
}
