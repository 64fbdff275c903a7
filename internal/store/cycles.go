package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// CycleRecord is one job's part of one perfbot watch cycle: when it ran,
// what it tested, and the error or panic that ended it, if any. A
// watcher records one per job and cycle, so a job that fails cycle after
// cycle is seen (perfbot watch's failure notice, the dashboard's cycles
// page) although the other jobs go on.
type CycleRecord struct {
	// Job is the job's key, or "file:" and the job file's path when the
	// file did not load (there is no key to name it by).
	Job               string
	Name              string // the job's name (or its file)
	Cycle             int64  // the cycle's start, Unix nanoseconds: one id for all its jobs
	Started, Finished time.Time
	Tested            int    // commits tested
	Error             string // "" when the job's cycle went through
	Panicked          bool   // the error is a panic that was caught
	// Noticed is set on the cycle whose failure notice went out: one per
	// streak of failed cycles.
	Noticed bool
}

// Failed reports whether the job's cycle failed.
func (c CycleRecord) Failed() bool { return c.Error != "" }

// PutCycle records (or replaces) a job's cycle.
func (s *Store) PutCycle(ctx context.Context, c *CycleRecord) error {
	if err := checkText("job", c.Job, "name", c.Name, "error", c.Error); err != nil {
		return fmt.Errorf("store: put cycle of %s: %w", c.Name, err)
	}
	if c.Job == "" {
		return fmt.Errorf("store: put cycle of %s: no job key", c.Name)
	}
	return s.write(ctx, "put cycle of "+c.Name, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO job_cycles (job, name, cycle, started_unix_ns, finished_unix_ns, tested, error, panicked, noticed)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (job, cycle) DO UPDATE SET name = excluded.name, started_unix_ns = excluded.started_unix_ns,
				finished_unix_ns = excluded.finished_unix_ns, tested = excluded.tested, error = excluded.error,
				panicked = excluded.panicked, noticed = excluded.noticed`,
			c.Job, c.Name, c.Cycle, c.Started.UnixNano(), c.Finished.UnixNano(), c.Tested, c.Error, boolInt(c.Panicked), boolInt(c.Noticed))
		return err
	})
}

// Cycles returns the newest n recorded cycles of a job ("": of every job),
// newest first.
func (s *Store) Cycles(ctx context.Context, job string, n int) ([]CycleRecord, error) {
	var out []CycleRecord
	err := s.read(ctx, "list cycles", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT job, name, cycle, started_unix_ns, finished_unix_ns, tested, error, panicked, noticed
			FROM job_cycles WHERE ? = '' OR job = ? ORDER BY cycle DESC, job LIMIT ?`, job, job, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c CycleRecord
			var started, finished, panicked, noticed int64
			if err := rows.Scan(&c.Job, &c.Name, &c.Cycle, &started, &finished, &c.Tested, &c.Error, &panicked, &noticed); err != nil {
				return err
			}
			c.Started, c.Finished = time.Unix(0, started), time.Unix(0, finished)
			c.Panicked, c.Noticed = panicked != 0, noticed != 0
			out = append(out, c)
		}
		return rows.Err()
	})
	return out, err
}

// FailStreak returns a job's failed cycles since its last cycle that went
// through, newest first (none when its newest cycle went through).
func (s *Store) FailStreak(ctx context.Context, job string) ([]CycleRecord, error) {
	var streak []CycleRecord
	for n := 64; ; n *= 4 {
		cs, err := s.Cycles(ctx, job, n)
		if err != nil {
			return nil, err
		}
		streak = streak[:0]
		for _, c := range cs {
			if !c.Failed() {
				return streak, nil
			}
			streak = append(streak, c)
		}
		if len(cs) < n {
			return streak, nil
		}
	}
}
