package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/triage"
)

// CompareArgs is a perfbot.compare job: measure commits of a job in
// whole interleaved rounds on machines of Class, as perfbot compare does
// on one machine.
type CompareArgs struct {
	Job   JobSpec `json:"job"`
	Class string  `json:"class"`
	// Commits are full hashes (the submitter resolves revisions), base
	// first.
	Commits []string    `json:"commits"`
	Variant job.Variant `json:"variant"`
	Runs    int         `json:"runs,omitempty"` // default: the job's
}

// Kind is River's name for comparisons.
func (CompareArgs) Kind() string { return "perfbot.compare" }

// InsertOpts puts comparisons in the server's queue.
func (CompareArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueControl, MaxAttempts: MaxAttempts}
}

// CompareOutput is what a comparison records: the rounds to compare,
// within the session that took them (the table is built from the store).
type CompareOutput struct {
	Commits []gitrev.Commit `json:"commits"`
	Rounds  []int           `json:"rounds"`
	Session string          `json:"session"`
	Taken   int             `json:"taken"`
}

// BisectArgs is a perfbot.bisect job: find the commit between Good and
// Bad that changed Metric, measuring Parallel candidates at once on
// machines of Class (k-ary search; 0: one per live machine of the class).
type BisectArgs struct {
	Job         JobSpec `json:"job"`
	Class       string  `json:"class"`
	Good        string  `json:"good"` // full hashes
	Bad         string  `json:"bad"`
	Metric      string  `json:"metric"`
	Improvement bool    `json:"improvement,omitempty"`
	Parallel    int     `json:"parallel,omitempty"`
	// MaxCulprits is bisect's --max-culprits (0: its default).
	MaxCulprits int `json:"max_culprits,omitempty"`
	// Mode is bisect's --layout-robust ("" plain, forced, sweep), Preset
	// its --preset and Layouts its --layouts (zero: bisect's defaults).
	Mode    string `json:"mode,omitempty"`
	Preset  string `json:"preset,omitempty"`
	Layouts int    `json:"layouts,omitempty"`
	// NoTriage leaves the culprits of a plain bisection untriaged;
	// otherwise each is triaged on one machine of the class, as perfbot
	// submit triage does.
	NoTriage bool `json:"no_triage,omitempty"`
}

// Kind is River's name for bisections.
func (BisectArgs) Kind() string { return "perfbot.bisect" }

// InsertOpts puts bisections in the server's queue.
func (BisectArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueControl, MaxAttempts: MaxAttempts}
}

// controlWorker works a server's orchestration jobs.
type compareWorker struct {
	river.WorkerDefaults[CompareArgs]
	s *Server
}

// Timeout is the server's lease: an orchestration that outlives it is
// picked up again from what is stored (River rescues it after a server
// crash the same way).
func (cw *compareWorker) Timeout(*river.Job[CompareArgs]) time.Duration { return cw.s.cfg.Lease }

func (cw *compareWorker) Work(ctx context.Context, rj *river.Job[CompareArgs]) error {
	s, a := cw.s, rj.Args
	j, repo, err := s.ws.open(ctx, a.Job, a.Commits...)
	if err != nil {
		return err
	}
	commits := make([]gitrev.Commit, len(a.Commits))
	targets := make([]measure.Target, len(a.Commits))
	for i, h := range a.Commits {
		if commits[i], err = repo.Repo.Resolve(ctx, h); err != nil {
			return err
		}
		targets[i] = measure.Target{Commit: commits[i], Variant: a.Variant}
	}
	remote := s.client.For(a.Job, a.Class)
	defer remote.Close()
	out, err := measure.Measure(ctx, j, targets, measure.Options{Store: s.cfg.Results, Builder: remote, Executor: remote,
		Runs: a.Runs, WholeRounds: true, Retry: true})
	if err != nil {
		return again(ctx, err)
	}
	if err := out.BuildErrors(); err != nil {
		return river.JobCancel(err)
	}
	return river.RecordOutput(ctx, CompareOutput{Commits: commits, Rounds: out.Rounds, Session: out.Session, Taken: out.Taken})
}

// again turns an orchestration's error into River's answer: when its
// context ended (the lease ran out, or the server is stopping), snooze:
// the job runs again in a second, on this server or the next one started,
// and resumes from the store, without spending an attempt; otherwise the
// error.
func again(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return river.JobSnooze(time.Second)
	}
	return err
}

type bisectWorker struct {
	river.WorkerDefaults[BisectArgs]
	s *Server
}

func (bw *bisectWorker) Timeout(*river.Job[BisectArgs]) time.Duration { return bw.s.cfg.Lease }

func (bw *bisectWorker) Work(ctx context.Context, rj *river.Job[BisectArgs]) error {
	s, a := bw.s, rj.Args
	j, b, err := s.ws.open(ctx, a.Job, a.Good, a.Bad)
	if err != nil {
		return err
	}
	logf := s.jobLog(rj.ID)
	cfg := bisect.Config{Job: j, Good: a.Good, Bad: a.Bad, Metric: a.Metric, Improvement: a.Improvement, MaxCulprits: a.MaxCulprits,
		Mode: bisect.Mode(a.Mode), Preset: a.Preset, Layouts: a.Layouts, NoTriage: a.NoTriage,
		// Each culprit's triage runs on one machine of the class.
		Triage: func(ctx context.Context, tc triage.Config) (*triage.Result, error) {
			return s.triageOn(ctx, a.Job, a.Class, b, tc, logf)
		}}
	if err := cfg.Check(); err != nil {
		return river.JobCancel(err)
	}
	k := a.Parallel
	if k <= 0 {
		live, err := s.client.live(ctx, a.Class, nil)
		if err != nil {
			return err
		}
		k = max(1, len(live))
	}
	remote := s.client.For(a.Job, a.Class)
	defer remote.Close()
	cfg.Parallel = k
	cfg.Env = measure.Env{Store: s.cfg.Results, Repo: b.Repo, Builder: remote, Executor: remote, Logf: logf}
	res, err := bisect.Run(ctx, cfg)
	if err != nil && res == nil {
		return again(ctx, err)
	}
	if err != nil && ctx.Err() != nil {
		return again(ctx, err)
	}
	out := BisectOutput{Result: res}
	if err != nil {
		out.Error = err.Error()
	}
	if res != nil {
		out.Mode, out.ModeDetail = res.Mode, res.ModeDetail
	}
	if res != nil && res.Table != nil {
		data, err := encodeGob(res.Table)
		if err != nil {
			return fmt.Errorf("recording the bisection's check table: %w", err)
		}
		out.CheckTable = data
	}
	return river.RecordOutput(ctx, out)
}

// BisectOutput is what a bisection records: its result, and the error
// that ended it without a culprit (no change, wrong direction, an end
// that cannot be measured).
type BisectOutput struct {
	Result *bisect.Result `json:"result"`
	Error  string         `json:"error,omitempty"`
	// CheckTable is the result's table of the check (Result.Table), in
	// encoding/gob: see Decode.
	CheckTable []byte `json:"check_table,omitempty"`
	// Mode and ModeDetail are the result's (how every commit was built),
	// which its JSON leaves out.
	Mode       bisect.Mode `json:"mode,omitempty"`
	ModeDetail string      `json:"mode_detail,omitempty"`
}

// Decode returns the result with its mode and its check table.
func (o BisectOutput) Decode() (*bisect.Result, error) {
	if o.Result == nil {
		return nil, nil
	}
	res := *o.Result
	res.Mode, res.ModeDetail = o.Mode, o.ModeDetail
	if len(o.CheckTable) > 0 {
		var t compare.Table
		if err := decodeGob(o.CheckTable, &t); err != nil {
			return nil, fmt.Errorf("the bisection's recorded check table: %w", err)
		}
		res.Table = &t
	}
	return &res, nil
}
