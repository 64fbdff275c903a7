package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// PutBuild stores b, replacing any build with the same Key.
func (s *Store) PutBuild(ctx context.Context, b *BuildRecord) error {
	what := fmt.Sprintf("put build %q", b.Key)
	switch {
	case b.Key == "":
		return fmt.Errorf("store: put build of commit %q: empty key", b.Commit)
	case b.Commit == "":
		return fmt.Errorf("store: %s: empty commit", what)
	case b.Status != BuildOK && b.Status != BuildFailed:
		return fmt.Errorf("store: %s: status %q is not %q or %q", what, b.Status, BuildOK, BuildFailed)
	}
	if err := checkText("key", b.Key, "commit", b.Commit, "variant", b.Variant, "artifact folder", b.ArtifactDir,
		"log path", b.LogPath, "error", b.Error); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	started, err := timeArg("start time", b.Started)
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	return s.write(ctx, what, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO builds (build_key, commit_hash, variant, status, artifact_dir, log_path, error, started_unix_ns, duration_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (build_key) DO UPDATE SET
				commit_hash = excluded.commit_hash, variant = excluded.variant, status = excluded.status,
				artifact_dir = excluded.artifact_dir, log_path = excluded.log_path, error = excluded.error,
				started_unix_ns = excluded.started_unix_ns, duration_ns = excluded.duration_ns`,
			b.Key, b.Commit, b.Variant, string(b.Status), b.ArtifactDir, b.LogPath, b.Error, started, int64(b.Duration))
		return err
	})
}

// GetBuild returns the build stored under key, or an error wrapping
// ErrNotFound.
func (s *Store) GetBuild(ctx context.Context, key string) (*BuildRecord, error) {
	b := &BuildRecord{Key: key}
	var started sql.NullInt64
	var dur int64
	err := s.read(ctx, fmt.Sprintf("get build %q", key), func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `
			SELECT commit_hash, variant, status, artifact_dir, log_path, error, started_unix_ns, duration_ns
			FROM builds WHERE build_key = ?`, key).
			Scan(&b.Commit, &b.Variant, &b.Status, &b.ArtifactDir, &b.LogPath, &b.Error, &started, &dur)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	b.Started = timeOf(started)
	b.Duration = time.Duration(dur)
	return b, nil
}

// PutJob stores the atomic job with the given key: its name and its
// canonical JSON spec, so that a key found in the database can be explained
// later. It replaces what was stored under the key.
func (s *Store) PutJob(ctx context.Context, key, name string, spec []byte) error {
	what := fmt.Sprintf("put job %q (%s)", key, name)
	if key == "" {
		return fmt.Errorf("store: put job %q: empty key", name)
	}
	if !json.Valid(spec) {
		return fmt.Errorf("store: %s: spec is not valid JSON", what)
	}
	if err := checkText("key", key, "name", name, "spec", string(spec)); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	return s.write(ctx, what, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO jobs (job_key, name, spec) VALUES (?, ?, ?)
			ON CONFLICT (job_key) DO UPDATE SET name = excluded.name, spec = excluded.spec`,
			key, name, string(spec))
		return err
	})
}

// GetJob returns the name and spec stored under key, or an error wrapping
// ErrNotFound.
func (s *Store) GetJob(ctx context.Context, key string) (name string, spec []byte, err error) {
	var text string
	err = s.read(ctx, fmt.Sprintf("get job %q", key), func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT name, spec FROM jobs WHERE job_key = ?`, key).Scan(&name, &text)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		return err
	})
	if err != nil {
		return "", nil, err
	}
	return name, []byte(text), nil
}

// JobKeys returns the keys of the stored jobs, sorted: what a store holds
// when no job file is at hand (perfbot serve --store).
func (s *Store) JobKeys(ctx context.Context) ([]string, error) {
	return s.column(ctx, "list jobs", `SELECT job_key FROM jobs ORDER BY job_key`)
}

// PutState stores data, opaque to the store, as the state of the session
// (kind, key), e.g. ("bisect", <session id>). It replaces any earlier state.
func (s *Store) PutState(ctx context.Context, kind, key string, data []byte) error {
	what := fmt.Sprintf("put %s state %q", kind, key)
	if kind == "" {
		return fmt.Errorf("store: put state %q: empty kind", key)
	}
	if err := checkText("kind", kind, "key", key); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	if data == nil {
		data = []byte{}
	}
	return s.write(ctx, what, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO states (kind, key, data, updated_unix_ns) VALUES (?, ?, ?, ?)
			ON CONFLICT (kind, key) DO UPDATE SET data = excluded.data, updated_unix_ns = excluded.updated_unix_ns`,
			kind, key, data, time.Now().UnixNano())
		return err
	})
}

// GetState returns the state of the session (kind, key), or an error
// wrapping ErrNotFound.
func (s *Store) GetState(ctx context.Context, kind, key string) ([]byte, error) {
	var data []byte
	err := s.read(ctx, fmt.Sprintf("get %s state %q", kind, key), func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT data FROM states WHERE kind = ? AND key = ?`, kind, key).Scan(&data)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// DeleteState deletes the state of the session (kind, key). Deleting a
// state that does not exist is not an error.
func (s *Store) DeleteState(ctx context.Context, kind, key string) error {
	return s.write(ctx, fmt.Sprintf("delete %s state %q", kind, key), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM states WHERE kind = ? AND key = ?`, kind, key)
		return err
	})
}

// StateKeys returns the keys of the stored states of kind, sorted, so that
// unfinished sessions can be listed and resumed.
func (s *Store) StateKeys(ctx context.Context, kind string) ([]string, error) {
	return s.column(ctx, fmt.Sprintf("list %s states", kind), `SELECT key FROM states WHERE kind = ? ORDER BY key`, kind)
}

// column runs a query of one text column and returns its values in order;
// what names it in errors.
func (s *Store) column(ctx context.Context, what, query string, args ...any) ([]string, error) {
	var out []string
	err := s.read(ctx, what, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				return err
			}
			out = append(out, v)
		}
		return rows.Err()
	})
	return out, err
}
