package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// BrokenBuild is a commit perfbot watch could not build for a job and
// variant. A first failure may be the machine's (a full disk, a killed
// compiler): watch builds the commit once more in a later cycle, and only
// a second failure is Final.
type BrokenBuild struct {
	Job      string // job key
	Variant  string // "" for the plain build
	Commit   string
	Branch   string
	Failures int  // how many times the build failed
	Final    bool // no more retries: the commit does not build
	Error    string
	LogPath  string // the last build's log
	First    time.Time
	Last     time.Time
}

// PutBrokenBuild records (or replaces) a broken build.
func (s *Store) PutBrokenBuild(ctx context.Context, b *BrokenBuild) error {
	if err := checkText("job key", b.Job, "variant", b.Variant, "commit", b.Commit, "branch", b.Branch,
		"error", b.Error, "log path", b.LogPath); err != nil {
		return fmt.Errorf("store: put broken build %s: %w", b.Commit, err)
	}
	return s.write(ctx, "put broken build "+b.Commit, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO watch_builds (job_key, variant, commit_hash, branch, failures, final, error, log_path, first_unix_ns, last_unix_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (job_key, variant, commit_hash) DO UPDATE SET branch = excluded.branch, failures = excluded.failures,
				final = excluded.final, error = excluded.error, log_path = excluded.log_path, last_unix_ns = excluded.last_unix_ns`,
			b.Job, b.Variant, b.Commit, b.Branch, b.Failures, boolInt(b.Final), b.Error, b.LogPath, b.First.UnixNano(), b.Last.UnixNano())
		return err
	})
}

// BrokenBuilds returns the broken builds of a job and variant by commit.
func (s *Store) BrokenBuilds(ctx context.Context, job, variant string) (map[string]BrokenBuild, error) {
	out := map[string]BrokenBuild{}
	err := s.read(ctx, "list broken builds", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT commit_hash, branch, failures, final, error, log_path, first_unix_ns, last_unix_ns
			FROM watch_builds WHERE job_key = ? AND variant = ?`, job, variant)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			b := BrokenBuild{Job: job, Variant: variant}
			var final, first, last int64
			if err := rows.Scan(&b.Commit, &b.Branch, &b.Failures, &final, &b.Error, &b.LogPath, &first, &last); err != nil {
				return err
			}
			b.Final, b.First, b.Last = final != 0, time.Unix(0, first), time.Unix(0, last)
			out[b.Commit] = b
		}
		return rows.Err()
	})
	return out, err
}

// ForgetFailedBuild deletes the record of the build under key when it
// failed, so that the next Build of it builds again (a retry); a build
// that succeeded, or none, is left alone.
func (s *Store) ForgetFailedBuild(ctx context.Context, key string) error {
	return s.write(ctx, "forget failed build "+key, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM builds WHERE build_key = ? AND status = ?`, key, string(BuildFailed))
		return err
	})
}

// Backfill is a range of old commits perfbot watch tests on a branch,
// spread over cycles: the first-parent commits from Since (tested first,
// where the history starts) up to Until (the branch's head when the
// backfill began).
type Backfill struct {
	Job     string // job key
	Variant string
	Branch  string
	Since   string // full hash
	Until   string // full hash
	Done    bool
	Started time.Time
}

// PutBackfill records (or replaces) the backfill of a job, variant and
// branch.
func (s *Store) PutBackfill(ctx context.Context, b *Backfill) error {
	if err := checkText("job key", b.Job, "variant", b.Variant, "branch", b.Branch, "since", b.Since, "until", b.Until); err != nil {
		return fmt.Errorf("store: put backfill of %s: %w", b.Branch, err)
	}
	return s.write(ctx, "put backfill of "+b.Branch, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO watch_backfills (job_key, variant, branch, since_commit, until_commit, done, started_unix_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (job_key, variant, branch) DO UPDATE SET since_commit = excluded.since_commit,
				until_commit = excluded.until_commit, done = excluded.done, started_unix_ns = excluded.started_unix_ns`,
			b.Job, b.Variant, b.Branch, b.Since, b.Until, boolInt(b.Done), b.Started.UnixNano())
		return err
	})
}

// GetBackfill returns the backfill of a job, variant and branch, or an
// error wrapping ErrNotFound.
func (s *Store) GetBackfill(ctx context.Context, job, variant, branch string) (*Backfill, error) {
	b := &Backfill{Job: job, Variant: variant, Branch: branch}
	var done, started int64
	err := s.read(ctx, "get backfill of "+branch, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT since_commit, until_commit, done, started_unix_ns FROM watch_backfills
			WHERE job_key = ? AND variant = ? AND branch = ?`, job, variant, branch).Scan(&b.Since, &b.Until, &done, &started)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("backfill of %s: %w", branch, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	b.Done, b.Started = done != 0, time.Unix(0, started)
	return b, nil
}

// DecideAnchorMode records whether a job's history (job key, variant)
// keeps an anchor, unless that was decided before, and returns the
// decision in force: the first one, so that a history keeps its mode and
// its ratios have no holes.
func (s *Store) DecideAnchorMode(ctx context.Context, job, variant string, anchor bool, reason string) (bool, string, error) {
	if err := checkText("job key", job, "variant", variant, "reason", reason); err != nil {
		return false, "", fmt.Errorf("store: anchor mode: %w", err)
	}
	var got int64
	var why string
	err := s.write(ctx, "decide anchor mode", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO watch_anchor_modes (job_key, variant, anchor, reason, decided_unix_ns)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (job_key, variant) DO NOTHING`, job, variant, boolInt(anchor), reason, time.Now().UnixNano()); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT anchor, reason FROM watch_anchor_modes WHERE job_key = ? AND variant = ?`, job, variant).Scan(&got, &why)
	})
	return got != 0, why, err
}

// SetAnchorMode records whether a job's history keeps an anchor, replacing
// an earlier decision (a person switched it in the watch file).
func (s *Store) SetAnchorMode(ctx context.Context, job, variant string, anchor bool, reason string) error {
	if err := checkText("job key", job, "variant", variant, "reason", reason); err != nil {
		return fmt.Errorf("store: anchor mode: %w", err)
	}
	return s.write(ctx, "set anchor mode", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO watch_anchor_modes (job_key, variant, anchor, reason, decided_unix_ns)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (job_key, variant) DO UPDATE SET anchor = excluded.anchor, reason = excluded.reason,
			decided_unix_ns = excluded.decided_unix_ns`, job, variant, boolInt(anchor), reason, time.Now().UnixNano())
		return err
	})
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
