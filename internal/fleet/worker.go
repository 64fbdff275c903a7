package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// WorkerConfig configures a benchmark machine's worker.
type WorkerConfig struct {
	// Pool is the fleet's database; Results its results store.
	Pool    *pgxpool.Pool
	Results *store.Store
	// Class is the machine class whose builds the worker takes; Machine
	// names this machine (its rounds' queue, and the Machine of its runs).
	Class, Machine string
	// Dir is the machine's workspace (clones, build cache, run logs).
	Dir string
	// CPU is where runs are pinned (-1: not pinned), and Calibration what
	// choosing it found (for the machine's record).
	CPU         int
	Calibration string
	// Heartbeat is how often the worker tells the database it is alive
	// (default 5s); a heartbeat that fails means the database is lost.
	Heartbeat time.Duration
	// Log receives one line per event.
	Log func(format string, args ...any)
}

// Worker takes the builds of its class and the rounds pinned to its
// machine, one at a time, holding the machine's measuring lock for each.
type Worker struct {
	cfg   WorkerConfig
	ws    *workspace
	river *river.Client[pgx.Tx]

	busy sync.Mutex // one job at a time on this machine

	mu     sync.Mutex
	lost   bool               // the database does not answer
	cancel context.CancelFunc // the job in progress, cancelled when the database is lost
}

// NewWorker registers the machine in the database and makes its River
// client (not started: see Run).
func NewWorker(ctx context.Context, cfg WorkerConfig) (*Worker, error) {
	if cfg.Class == "" || cfg.Machine == "" {
		return nil, errors.New("a worker needs a machine class and a machine name (--class, --machine)")
	}
	if err := CheckName("class", cfg.Class); err != nil {
		return nil, err
	}
	if err := CheckName("machine", cfg.Machine); err != nil {
		return nil, err
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 5 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	if err := Migrate(ctx, cfg.Pool); err != nil {
		return nil, err
	}
	ws, err := openWorkspace(cfg.Dir, cfg.Pool)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, ws: ws}
	workers := river.NewWorkers()
	river.AddWorker(workers, &buildWorker{w: w})
	river.AddWorker(workers, &roundWorker{w: w})
	w.river, err = river.NewClient(riverpgxv5.New(cfg.Pool), &river.Config{
		ID: fmt.Sprintf("worker.%s.%d", cfg.Machine, os.Getpid()),
		Queues: map[string]river.QueueConfig{
			ClassQueue(cfg.Class):     {MaxWorkers: 1},
			MachineQueue(cfg.Machine): {MaxWorkers: 1},
		},
		Workers: workers,
		// Rounds of a measurement follow each other on a machine: fetch
		// the next one at once (River's default cooldown, 100ms, would
		// add that much per round).
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 100 * time.Millisecond,
		// The server leads (rescues, schedules retries): a benchmark
		// machine does nothing but its jobs.
		LeaderElectionDisabled: true,
		Logger:                 slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		ws.Close()
		return nil, err
	}
	if err := register(ctx, cfg.Pool, describe(cfg)); err != nil {
		ws.Close()
		return nil, fmt.Errorf("registering machine %s: %w", cfg.Machine, err)
	}
	return w, nil
}

// describe is what the machine's record says about it.
func describe(cfg WorkerConfig) Machine {
	m := Machine{ID: cfg.Machine, Class: cfg.Class, CPUs: runtime.NumCPU(), CPU: cfg.CPU, Calibration: cfg.Calibration, PID: os.Getpid()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Machine[:])
	}
	if out, err := exec.Command("cc", "--version").Output(); err == nil {
		m.Compiler, _, _ = strings.Cut(string(out), "\n")
	}
	return m
}

// Run works jobs until ctx ends, then stops the client, cancelling the
// job in progress (its run dies with everything it started; River gives
// the job to another worker).
func (w *Worker) Run(ctx context.Context) error {
	defer w.ws.Close()
	if err := w.river.Start(ctx); err != nil {
		return err
	}
	w.cfg.Log("machine %s (class %s) takes jobs from queues %s and %s", w.cfg.Machine, w.cfg.Class,
		ClassQueue(w.cfg.Class), MachineQueue(w.cfg.Machine))
	t := time.NewTicker(w.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return w.river.StopAndCancel(stop)
		case <-t.C:
			w.beat(ctx)
		}
	}
}

// beat sends a heartbeat. When it fails the database is lost: the job in
// progress is cancelled (nothing it measures could be stored) and no new
// one starts until a heartbeat gets through again.
func (w *Worker) beat(ctx context.Context) {
	hctx, cancel := context.WithTimeout(ctx, w.cfg.Heartbeat)
	err := heartbeat(hctx, w.cfg.Pool, w.cfg.Machine)
	cancel()
	if ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err != nil && !w.lost:
		w.lost = true
		w.cfg.Log("lost the database (%v): stopped measuring; retrying every %v", err, w.cfg.Heartbeat)
		if w.cancel != nil {
			w.cancel()
		}
	case err == nil && w.lost:
		w.lost = false
		w.cfg.Log("the database answers again: taking jobs")
	}
}

// begin starts a job on this machine: alone in the process and on the
// machine (its measuring lock), in a context cancelled when the database
// is lost. end undoes it.
func (w *Worker) begin(ctx context.Context, what string) (context.Context, func(), error) {
	w.busy.Lock()
	release, err := measure.LockMachine(ctx, func(holder string) { w.cfg.Log("%s waits for %s", what, holder) })
	if err != nil {
		w.busy.Unlock()
		return nil, nil, err
	}
	jctx, cancel := context.WithCancel(ctx)
	w.mu.Lock()
	lost := w.lost
	w.cancel = cancel
	w.mu.Unlock()
	end := func() {
		w.mu.Lock()
		w.cancel = nil
		w.mu.Unlock()
		cancel()
		release()
		w.busy.Unlock()
	}
	if lost {
		end()
		return nil, nil, errors.New("the database is lost: not measuring")
	}
	return jctx, end, nil
}

type buildWorker struct {
	river.WorkerDefaults[BuildArgs]
	w *Worker
}

// Timeout follows the job file's build timeout.
func (bw *buildWorker) Timeout(job *river.Job[BuildArgs]) time.Duration {
	j, err := job.Args.Job.Load()
	if err != nil {
		return 0
	}
	return buildTimeout(j)
}

func (bw *buildWorker) Work(ctx context.Context, job *river.Job[BuildArgs]) error {
	w, a := bw.w, job.Args
	ctx, end, err := w.begin(ctx, "build of "+gitrev.Short(a.Commit))
	if err != nil {
		return err
	}
	defer end()
	j, b, err := w.ws.open(ctx, a.Job, a.Commit)
	if err != nil {
		return err
	}
	w.cfg.Log("building %s (%s) of %s", gitrev.Short(a.Commit), variantName(a.Variant), j.Name)
	res, err := b.Build(ctx, j, gitrev.Commit{Hash: a.Commit}, a.Variant)
	if err != nil && !errors.Is(err, build.ErrFailed) {
		return err
	}
	fb, perr := w.ws.publish(ctx, j, a, w.cfg.Machine, res, err)
	if perr != nil {
		return perr
	}
	return river.RecordOutput(ctx, BuildOutput{Key: fb.Key, Status: fb.Status, Error: fb.Error, Machine: w.cfg.Machine})
}

type roundWorker struct {
	river.WorkerDefaults[RoundArgs]
	w *Worker
}

// Timeout follows the job file's run timeout, per slot.
func (rw *roundWorker) Timeout(job *river.Job[RoundArgs]) time.Duration {
	j, err := job.Args.Job.Load()
	if err != nil {
		return 0
	}
	return roundTimeout(j, len(job.Args.Slots))
}

func (rw *roundWorker) Work(ctx context.Context, job *river.Job[RoundArgs]) error {
	w, a := rw.w, job.Args
	if a.Machine != w.cfg.Machine {
		return river.JobCancel(fmt.Errorf("round for machine %s reached %s", a.Machine, w.cfg.Machine))
	}
	ctx, end, err := w.begin(ctx, fmt.Sprintf("round %d", a.Round))
	if err != nil {
		return err
	}
	defer end()
	var commits []string
	for _, s := range a.Slots {
		commits = append(commits, s.Commit)
	}
	j, b, err := w.ws.open(ctx, a.Job, commits...)
	if err != nil {
		return err
	}
	builds := map[string]*build.Result{}
	exec := measure.Local{CPU: w.cfg.CPU, Machine: w.cfg.Machine}
	var out RoundOutput
	for _, s := range a.Slots {
		res := builds[s.BuildKey]
		if res == nil {
			if res, err = w.ws.restore(ctx, j, b, s.BuildKey); err != nil {
				return err
			}
			builds[s.BuildKey] = res
		}
		key := store.RunKey{Job: j.Key(), Commit: s.Commit, Variant: measure.VariantID(s.Variant), Index: s.Index}
		task := measure.Task{Job: j, Key: key, Variant: s.Variant, Build: res, Session: a.Session, Warmup: s.Index == 0}
		if task.Warmup {
			task.Key.Index = 1 // a folder of its own; never stored
			task.LogDir, err = measure.RunLogDir(w.ws.local, store.RunKey{Job: key.Job, Commit: key.Commit, Variant: key.Variant + "~warmup", Index: 1})
		} else {
			task.LogDir, err = measure.RunLogDir(w.ws.local, key)
		}
		if err != nil {
			return err
		}
		rec, err := exec.Execute(ctx, task)
		if err != nil {
			return err
		}
		if task.Warmup {
			continue
		}
		rec.RunKey, rec.Session = key, a.Session
		if err := w.keepLogs(ctx, rec); err != nil {
			return err
		}
		// Stored now, so that nothing measured is lost if this machine
		// dies before the round ends (the orchestrator stores it again:
		// an upsert of the same key).
		if err := w.cfg.Results.PutRun(ctx, rec); err != nil {
			return fmt.Errorf("storing run %s: %w", key, err)
		}
		out.Runs = append(out.Runs, rec)
	}
	w.cfg.Log("round %d of session %.8s: %d runs", a.Round, a.Session, len(out.Runs))
	return river.RecordOutput(ctx, out)
}

// keepLogs uploads a run's logs into the fleet's database and points the
// record at them there (sha256:<hash>), so that any machine can read them.
func (w *Worker) keepLogs(ctx context.Context, rec *store.RunRecord) error {
	for _, p := range []*string{&rec.StdoutPath, &rec.StderrPath} {
		data, err := os.ReadFile(*p)
		if err != nil {
			return err
		}
		h, err := putBlob(ctx, w.cfg.Pool, data)
		if err != nil {
			return err
		}
		*p = BlobPrefix + h
	}
	return nil
}

// BlobPrefix starts a log path that names a blob in the fleet's database.
const BlobPrefix = "sha256:"
