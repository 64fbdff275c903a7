package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/perfbot/perfbot/internal/watch"
)

// watchLockClass is the first key of the scheduler's advisory lock of a
// watch file ("pfbw"; the second is hashtext of the file's path): see
// store's lock classes, which it does not overlap.
const watchLockClass = 0x70666277

// Schedule runs the watch file's cycles on the fleet until ctx ends: one
// scheduler per watch file across every server given it. Each server
// tries the file's advisory lock (a session lock on a connection of its
// own, held while it lives: PostgreSQL frees it when the server dies);
// the one that holds it queues a perfbot.watch cycle, waits for it to
// end, waits the watch file's interval, and queues the next; the others
// try again every retry. class is the class of the jobs the file gives
// none. A watch file with errors is logged and read again at the next
// cycle.
func (s *Server) Schedule(ctx context.Context, file, class string, retry time.Duration) error {
	file, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	if retry <= 0 {
		retry = 10 * time.Second
	}
	for ctx.Err() == nil {
		held, err := s.scheduleHeld(ctx, s.cfg.Pool, file, class)
		if err != nil && ctx.Err() == nil && !errors.Is(err, ErrLockLost) { // said already
			s.cfg.Log("watch %s: %v", file, err)
		}
		if !held || err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(retry):
			}
		}
	}
	return nil
}

// scheduleHeld takes the file's lock, when free, and schedules its cycles
// while it holds it. held says it took it. A lost lock (its connection
// dropped: pinged every LockPing) stops the scheduling at once, the
// wait for a cycle or for the interval included, so that two servers
// never schedule one file for longer than a ping.
func (s *Server) scheduleHeld(ctx context.Context, pool *pgxpool.Pool, file, class string) (held bool, err error) {
	var key int32
	if err := pool.QueryRow(ctx, `SELECT hashtext($1)`, file).Scan(&key); err != nil {
		return false, err
	}
	lock, held, err := tryLock(ctx, pool, watchLockClass, key, s.cfg.LockPing)
	if err != nil || !held {
		return false, err
	}
	defer lock.Release()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	defer context.AfterFunc(lock.Context(), func() { stop(lock.Lost()) })()
	s.cfg.Log("watch %s: this server schedules its cycles", file)
	for {
		interval := watch.DefaultInterval
		if cfg, err := watch.Load(file); err != nil {
			s.cfg.Log("watch %s: %v (read again at the next cycle)", file, err)
		} else {
			interval = cfg.Interval
			s.cycle(ctx, file, class)
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
		if lost := lock.Lost(); lost != nil {
			s.cfg.Log("watch %s: this server no longer schedules its cycles: %v", file, lost)
			return true, lost
		}
		if ctx.Err() != nil {
			return true, nil
		}
	}
}

// cycle queues one cycle of file (or joins the one queued) and waits for
// it, logging how it ended.
func (s *Server) cycle(ctx context.Context, file, class string) {
	row, err := Submit(ctx, s.River, WatchArgs{File: file, Class: class})
	if err != nil {
		s.cfg.Log("watch %s: queueing a cycle: %v", file, err)
		return
	}
	id := row.ID
	if row, err = Await(ctx, s.River, id, time.Second); err != nil {
		if ctx.Err() == nil {
			s.cfg.Log("watch %s: cycle (job %d): %v", file, id, err)
		}
		return
	}
	var out WatchOutput
	if err := json.Unmarshal(row.Output(), &out); err != nil {
		s.cfg.Log("watch %s: cycle (job %d): output: %v", file, row.ID, err)
		return
	}
	s.cfg.Log("watch %s: cycle (job %d) done: %d commits tested, %d findings, %d errors, exit status %d",
		file, row.ID, out.Tested, len(out.Findings), len(out.Errors), out.Status)
	if len(out.Errors) > 0 {
		s.cfg.Log("watch %s: %v", file, errors.New(out.Errors[0]))
	}
}
