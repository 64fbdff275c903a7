package watch

import (
	"context"
	"path/filepath"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/triage"
)

// Place is where one job is measured in one cycle: the Env its
// measurements, bisections and triages run in (this machine, or a fleet's
// machines of the job's class), and what closes it.
type Place struct {
	measure.Env
	// BuildDir is the folder whose builds/<key>/build.log are the build
	// logs a broken build's report points to ("" where the logs are
	// elsewhere: a fleet keeps them in its database).
	BuildDir string
	// Close releases what Open took (nil: nothing).
	Close func()
	// Triage triages a culprit against its parent (nil: triage.Run over
	// Env). A fleet's takes every experiment on one machine of the job's
	// class, as perfbot submit triage does.
	Triage func(ctx context.Context, cfg triage.Config) (*triage.Result, error)
}

// Places says where a watch file's jobs are measured and kept. nil in a
// Watcher is [Local]: this machine, and the store next to each job file.
type Places interface {
	// Open opens where job j of the job file jc is measured in this cycle.
	// wait is told when another perfbot holds the machine.
	Open(ctx context.Context, jc JobConfig, j *job.Job, wait func(holder string)) (*Place, error)
	// Store opens the store that keeps the cycles and findings of the
	// job file jc; the caller calls done when finished with it.
	Store(ctx context.Context, jc JobConfig) (st *store.Store, done func(), err error)
}

// Local is this machine: a measuring session (measure.Open: its locks,
// the store next to the job file, the local builder) for each job.
type Local struct{}

// Open opens the job's measuring session.
func (Local) Open(ctx context.Context, _ JobConfig, j *job.Job, wait func(holder string)) (*Place, error) {
	s, err := measure.Open(ctx, j, "", wait)
	if err != nil {
		return nil, err
	}
	return &Place{Env: s.Env("", nil, nil, wait), BuildDir: s.Builder.Dir, Close: s.Close}, nil
}

// Store opens the store next to the job file.
func (Local) Store(_ context.Context, jc JobConfig) (*store.Store, func(), error) {
	st, err := store.Open(filepath.Join(filepath.Dir(jc.File), ".perfbot"))
	if err != nil {
		return nil, nil, err
	}
	return st, func() { st.Close() }, nil
}

func (w *Watcher) places() Places {
	if w.Places == nil {
		return Local{}
	}
	return w.Places
}

func (p *Place) close() {
	if p.Close != nil {
		p.Close()
	}
}
