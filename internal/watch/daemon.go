package watch

import (
	"context"
	"sync"
	"time"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// DefaultGrace is how long a stop request (SIGTERM) waits for the run or
// build in flight before it interrupts it: under systemd's 90 s, with
// room for perfbot to record and exit.
const DefaultGrace = 60 * time.Second

// Signals are the requests a running watch answers (package main turns
// SIGTERM, SIGINT and SIGHUP into them).
type Signals struct {
	// Stop asks for an orderly end: the run or build in flight finishes
	// and is stored, then Run returns nil; one still going after Grace is
	// interrupted (and taken again at the next start).
	Stop <-chan struct{}
	// Reload asks to read the watch file again before the next cycle; a
	// file with errors is refused (logged) and the old one kept.
	Reload <-chan struct{}
	// Grace bounds Stop's wait (DefaultGrace when zero).
	Grace time.Duration
}

// Run runs a cycle every Config.Interval until ctx ends (an error) or
// sig.Stop asks it to stop (nil). Each cycle's errors are logged and
// recorded per job (store.CycleRecord, docs/watch.md); after each cycle
// the build worktrees of every store are collected within Config.GC.
func (w *Watcher) Run(ctx context.Context, sig Signals) error {
	grace := sig.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	stopping := false
	for {
		cycleCtx, cancel := context.WithCancel(ctx)
		stop := &stopAfterStep{inner: w.Progress, cancel: cancel}
		w.Progress = stop
		done := make(chan struct{})
		go func() {
			select {
			case <-sig.Stop:
				w.logf("watch: stopping: the run or build in flight finishes first (at most %v)", grace)
				stop.request()
				t := time.NewTimer(grace)
				defer t.Stop()
				select {
				case <-t.C:
					w.logf("watch: still busy after %v: interrupting it (it is taken again at the next start)", grace)
					cancel()
				case <-done:
				}
			case <-done:
			}
		}()
		rep, err := w.Cycle(cycleCtx)
		close(done)
		w.Progress = stop.inner
		stopping = stop.requested()
		cancel()
		if stopping {
			w.logf("watch: stopped")
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range rep.Errors {
			w.logf("watch: %v", e)
		}
		w.Collect(ctx)
		w.logf("watch: cycle done: %d commits tested, %d findings; next in %v", len(rep.Tested), len(rep.Findings), w.Config.Interval)
		if stop := w.wait(ctx, sig); stop || ctx.Err() != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			w.logf("watch: stopped")
			return nil
		}
	}
}

// wait waits for the next cycle, reloading the watch file when asked; it
// returns true when asked to stop.
func (w *Watcher) wait(ctx context.Context, sig Signals) bool {
	start := time.Now()
	t := time.NewTimer(w.Config.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-sig.Stop:
			return true
		case <-sig.Reload:
			// A new interval counts from the end of the last cycle.
			if w.reload() {
				t.Reset(max(0, w.Config.Interval-time.Since(start)))
			}
		case <-t.C:
			return false
		}
	}
}

// reload reads the watch file again; one with errors keeps the old. It
// reports whether the new one was taken.
func (w *Watcher) reload() bool {
	cfg, err := Load(w.Config.File)
	if err != nil {
		w.logf("watch: reloading %s: %v; keeping the watch file read before", w.Config.File, err)
		return false
	}
	w.Config = cfg
	w.logf("watch: reloaded %s: %d job files, branches %v, interval %v (from the next cycle)", cfg.File, len(cfg.Jobs), cfg.Branches, cfg.Interval)
	return true
}

// Collect keeps the build worktrees of every store within Config.GC. A
// store another perfbot measures in is left for the next cycle.
func (w *Watcher) Collect(ctx context.Context) {
	if w.Config.GC.Off() {
		return
	}
	for _, dir := range w.Config.StoreDirs() {
		if err := CollectStore(ctx, dir, w.Config.GC, time.Now(), w.logf); err != nil {
			w.logf("watch: collecting worktrees of %s: %v", dir, err)
		}
	}
}

// CollectStore removes the build worktrees of the store folder dir that
// are over budget, least recently used first, under the folder's
// measuring lock (no build or run of it is in flight while it holds it);
// results and cached artifacts stay. A busy folder is skipped (logged).
func CollectStore(ctx context.Context, dir string, budget build.Budget, now time.Time, logf func(string, ...any)) error {
	st, err := store.Open(dir)
	if err != nil {
		return err
	}
	defer st.Close()
	release, err := st.Lock()
	if err != nil {
		logf("watch: not collecting worktrees now: %v", err)
		return nil
	}
	defer release()
	got, err := build.CollectWorktrees(ctx, dir, budget, now)
	if got.Removed > 0 {
		logf("watch: %s", got)
	}
	return err
}

// stopAfterStep passes progress on, and once a stop is requested ends the
// cycle (cancel) after the next stored run or finished build.
type stopAfterStep struct {
	inner  measure.Progress
	cancel func()
	mu     sync.Mutex
	stop   bool
}

func (s *stopAfterStep) request() {
	s.mu.Lock()
	s.stop = true
	s.mu.Unlock()
}

func (s *stopAfterStep) requested() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stop
}

func (s *stopAfterStep) step() {
	if s.requested() {
		s.cancel()
	}
}

func (s *stopAfterStep) Building(i, n int, t measure.Target) {
	if s.inner != nil {
		s.inner.Building(i, n, t)
	}
	s.step()
}

func (s *stopAfterStep) Built(i, n int, t measure.Target, r *build.Result, err error) {
	if s.inner != nil {
		s.inner.Built(i, n, t, r, err)
	}
	s.step()
}

func (s *stopAfterStep) Ran(done, total int, t measure.Target, r *store.RunRecord) {
	if s.inner != nil {
		s.inner.Ran(done, total, t, r)
	}
	s.step()
}
