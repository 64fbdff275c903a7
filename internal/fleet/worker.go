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
	cfg      WorkerConfig
	instance string // this process's random ID (newInstance)
	ws       *workspace
	river    *river.Client[pgx.Tx]

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
	ws, err := migrateAndOpen(ctx, cfg.Pool, cfg.Dir)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, ws: ws, instance: newInstance()}
	workers := river.NewWorkers()
	river.AddWorker(workers, &buildWorker{w: w})
	river.AddWorker(workers, &roundWorker{w: w})
	w.river, err = river.NewClient(riverpgxv5.New(cfg.Pool), &river.Config{
		ID: workerClientID(cfg.Machine, w.instance),
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
	m := describe(cfg)
	m.Instance = w.instance
	if err := register(ctx, cfg.Pool, m); err != nil {
		ws.Close()
		return nil, fmt.Errorf("registering machine %s: %w", cfg.Machine, err)
	}
	return w, nil
}

// describe is what the machine's record says about it.
func describe(cfg WorkerConfig) Machine {
	m := Machine{ID: cfg.Machine, Class: cfg.Class, CPUs: runtime.NumCPU(), CPU: cfg.CPU, Calibration: cfg.Calibration,
		PID: os.Getpid(), Beat: cfg.Heartbeat}
	m.Host, _ = os.Hostname()
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
// the job to another worker). It stops the same way, with an error, when
// another worker process has registered the machine (this one had lost
// the database for longer than its heartbeat stays fresh).
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
			if err := w.beat(ctx); err != nil {
				stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = w.river.StopAndCancel(stop)
				return fmt.Errorf("%w: this worker stops", err)
			}
		}
	}
}

// beat sends a heartbeat. When it fails the database is lost: the job in
// progress is cancelled (nothing it measures could be stored) and no new
// one starts until a heartbeat gets through again. When another process
// serves the machine now, beat returns that error.
func (w *Worker) beat(ctx context.Context) error {
	hctx, cancel := context.WithTimeout(ctx, w.cfg.Heartbeat)
	err := heartbeat(hctx, w.cfg.Pool, w.cfg.Machine, w.instance)
	cancel()
	if ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, errReplaced) {
		return err
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
	return nil
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
