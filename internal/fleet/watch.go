package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/triage"
	"github.com/perfbot/perfbot/internal/watch"
)

// WatchArgs is a perfbot.watch job: one cycle of the watch file File, as
// perfbot watch --once runs it, with each job measured, bisected and
// triaged on the machines of its class (the watch file's class:, else
// Class), its history, findings and mail state in the fleet's results
// store, its reports written into the watch file's report folder on the
// server. The server reads File and its job files, and the jobs'
// repositories, at these paths.
type WatchArgs struct {
	File  string `json:"file" river:"unique"` // absolute
	Class string `json:"class,omitempty"`
}

// Kind is River's name for watch cycles.
func (WatchArgs) Kind() string { return "perfbot.watch" }

// InsertOpts puts a watch cycle in the server's queue, once per watch
// file at a time: a cycle queued while one of the same file is queued or
// running is that one (River's unique jobs by File, in the states
// before an end), so that two schedulers, or a submission beside a
// scheduler, never run a file's cycles side by side.
func (WatchArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueControl, MaxAttempts: MaxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
			rivertype.JobStateRetryable, rivertype.JobStateScheduled}}}
}

func (a WatchArgs) check() error {
	if !filepath.IsAbs(a.File) {
		return fmt.Errorf("watch file %s: want an absolute path (the server reads it)", a.File)
	}
	if a.Class != "" {
		if err := CheckName("class", a.Class); err != nil {
			return err
		}
	}
	_, err := watch.Load(a.File)
	return err
}

// WatchOutput is what a watch cycle records: what perfbot watch --once
// logs and its exit status (0 no new real regression, 1 a new real
// regression, 2 an error of a job or branch).
type WatchOutput struct {
	Log         []string `json:"log"`
	Tested      int      `json:"tested"`
	Findings    []string `json:"findings"`
	Errors      []string `json:"errors,omitempty"`
	Regressions []string `json:"regressions,omitempty"`
	Status      int      `json:"status"`
}

// MaxWatchLog is how many lines of a cycle's log its output keeps (the
// server logs them all).
const MaxWatchLog = 2000

type watchWorker struct {
	river.WorkerDefaults[WatchArgs]
	s *Server
}

func (ww *watchWorker) Timeout(*river.Job[WatchArgs]) time.Duration { return ww.s.cfg.Lease }

func (ww *watchWorker) Work(ctx context.Context, rj *river.Job[WatchArgs]) error {
	s, a := ww.s, rj.Args
	lock, ok, err := holdLive(ctx, s.cfg.Pool, rj.ID, s.cfg.LockPing)
	if err != nil {
		return again(ctx, err)
	}
	if !ok {
		// Another server works it (a rescue that raced its start).
		return river.JobSnooze(WatchRescueEvery)
	}
	defer lock.Release()
	// A lost liveness lock (its connection dropped) lets another server's
	// rescue start the cycle again: this one stops at once.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	defer context.AfterFunc(lock.Context(), func() {
		if err := lock.Lost(); err != nil {
			stop(err)
		}
	})()
	// An earlier attempt that finished stored its outcome before letting
	// go of the lock: a rescue that raced River's completion of it, or a
	// server that died in between, must not cost the outcome.
	if done, ok, err := storedWatchOutput(ctx, s.cfg.Pool, rj.ID); err != nil {
		return again(ctx, err)
	} else if ok {
		s.cfg.Log("job %d: watch: the cycle finished in an earlier attempt; its stored outcome stands", rj.ID)
		return river.RecordOutput(ctx, done)
	}
	cfg, err := watch.Load(a.File)
	if err != nil {
		return river.JobCancel(err)
	}
	var out WatchOutput
	var mu sync.Mutex
	logf := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		s.cfg.Log("job %d: %s", rj.ID, line)
		mu.Lock()
		switch {
		case len(out.Log) < MaxWatchLog:
			out.Log = append(out.Log, line)
		case len(out.Log) == MaxWatchLog:
			out.Log = append(out.Log, "(more lines in the server's log)")
		}
		mu.Unlock()
	}
	w := &watch.Watcher{Config: cfg, Logf: logf, Places: &watchPlaces{s: s, class: a.Class, logf: logf}}
	rep, err := w.Cycle(ctx)
	if lost := lock.Lost(); lost != nil {
		logf("watch: stopped: its liveness lock is lost (%v); the cycle resumes from what is stored on the server that takes it", lost)
		return lost
	}
	if err != nil {
		return again(ctx, err)
	}
	logf("watch: %d commits tested, %d findings (report folder %s)", len(rep.Tested), len(rep.Findings), cfg.Report.Dir)
	out.Tested, out.Findings = len(rep.Tested), rep.Findings
	for _, e := range rep.Errors {
		out.Errors = append(out.Errors, e.Error())
	}
	if out.Regressions, err = w.Regressions(ctx, rep); err != nil {
		return again(ctx, err)
	}
	out.Status = rep.ExitStatus(out.Regressions)
	mu.Lock()
	defer mu.Unlock()
	if err := storeWatchOutput(ctx, s.cfg.Pool, rj.ID, out); err != nil {
		return again(ctx, err)
	}
	return river.RecordOutput(ctx, out)
}

// watchPlaces measures each job of a watch file on the machines of its
// class and keeps everything in the fleet's results store.
type watchPlaces struct {
	s     *Server
	class string // the class of the jobs whose watch file names none
	logf  func(format string, args ...any)
}

func (p *watchPlaces) Open(ctx context.Context, jc watch.JobConfig, j *job.Job, _ func(string)) (*watch.Place, error) {
	class := jc.Class
	if class == "" {
		class = p.class
	}
	if class == "" {
		return nil, errors.New("no machine class: give the job file class: in the watch file, or --class")
	}
	if err := CheckName("class", class); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(j.File)
	if err != nil {
		return nil, err
	}
	repo, err := gitrev.Open(ctx, j.Repo)
	if err != nil {
		return nil, fmt.Errorf("%s: repo: %w", j.File, err)
	}
	spec := SpecOf(j, data)
	env, done := p.s.Env(spec, class, repo, p.logf)
	// A culprit's triage takes every experiment on one machine of the
	// class, as perfbot submit triage does (triageOn).
	tri := func(ctx context.Context, tc triage.Config) (*triage.Result, error) {
		_, b, err := p.s.ws.open(ctx, spec, tc.Base, tc.Changed)
		if err != nil {
			return nil, err
		}
		return p.s.triageOn(ctx, spec, class, b, tc, p.logf)
	}
	return &watch.Place{Env: env, Close: done, Triage: tri}, nil
}

func (p *watchPlaces) Store(context.Context, watch.JobConfig) (*store.Store, func(), error) {
	return p.s.cfg.Results, func() {}, nil
}
