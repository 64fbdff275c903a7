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
		if err != nil && ctx.Err() == nil {
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
// while it holds it. held says it took it.
func (s *Server) scheduleHeld(ctx context.Context, pool *pgxpool.Pool, file, class string) (held bool, err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Release()
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, watchLockClass, file).Scan(&held); err != nil || !held {
		return false, err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, hashtext($2))`, watchLockClass, file) //nolint:errcheck
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
			return true, nil
		case <-time.After(interval):
		}
		// The lock is the connection's: a connection that broke lost it.
		if err := conn.Ping(ctx); err != nil {
			return true, err
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
