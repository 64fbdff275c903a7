package fleet

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/sensitivity"
)

// SensitivityArgs is a perfbot.sensitivity job: perfbot sensitivity of
// Commit on machines of Class, reported in Format.
type SensitivityArgs struct {
	Job    JobSpec       `json:"job"`
	Class  string        `json:"class"`
	Commit string        `json:"commit"` // a full hash (the submitter resolves the revision)
	Format report.Format `json:"format,omitempty"`
	// The knobs of sensitivity.Config (zero: its defaults).
	Preset  string  `json:"preset,omitempty"`
	Layouts int     `json:"layouts,omitempty"`
	Runs    int     `json:"runs,omitempty"`
	Alpha   float64 `json:"alpha,omitempty"`
}

// Kind is River's name for sensitivity measurements.
func (SensitivityArgs) Kind() string { return "perfbot.sensitivity" }

// InsertOpts puts sensitivity measurements in the server's queue.
func (SensitivityArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueControl, MaxAttempts: MaxAttempts}
}

// config is the sensitivity.Config of the job, without its Env.
func (a SensitivityArgs) config() (sensitivity.Config, error) {
	j, err := a.Job.Load()
	if err != nil {
		return sensitivity.Config{}, err
	}
	cfg := sensitivity.Config{Job: j, Rev: a.Commit, Preset: a.Preset, Layouts: a.Layouts, Runs: a.Runs, Alpha: a.Alpha}
	return cfg, cfg.Check()
}

func (a SensitivityArgs) check() error {
	if err := CheckName("class", a.Class); err != nil {
		return err
	}
	if a.Commit == "" {
		return errors.New("a sensitivity measurement needs a commit")
	}
	_, err := a.config()
	return err
}

// SensitivityOutput is what a sensitivity measurement records: its
// report, as perfbot sensitivity prints it in the job's format.
type SensitivityOutput struct {
	Report string `json:"report"`
}

type sensitivityWorker struct {
	river.WorkerDefaults[SensitivityArgs]
	s *Server
}

func (sw *sensitivityWorker) Timeout(*river.Job[SensitivityArgs]) time.Duration {
	return sw.s.cfg.Lease
}

func (sw *sensitivityWorker) Work(ctx context.Context, rj *river.Job[SensitivityArgs]) error {
	s, a := sw.s, rj.Args
	cfg, err := a.config()
	if err != nil {
		return river.JobCancel(err)
	}
	j, b, err := s.ws.open(ctx, a.Job, a.Commit)
	if err != nil {
		return err
	}
	env, done := s.Env(a.Job, a.Class, b.Repo, func(format string, args ...any) {
		s.cfg.Log("job %d: "+format, append([]any{rj.ID}, args...)...)
	})
	defer done()
	cfg.Job, cfg.Env = j, env
	res, err := sensitivity.Run(ctx, cfg)
	if errors.Is(err, build.ErrFailed) || errors.Is(err, gitrev.ErrUnknownRevision) {
		return river.JobCancel(err) // not tried again: it would fail the same way
	}
	if err != nil {
		return again(ctx, err)
	}
	var buf bytes.Buffer
	if err := report.WriteSensitivity(&buf, res, a.Format); err != nil {
		return river.JobCancel(err)
	}
	return river.RecordOutput(ctx, SensitivityOutput{Report: buf.String()})
}
