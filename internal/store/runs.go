package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/metric"
)

// RunDir returns the folder for the raw logs of run k, lkp-style:
//
//	<results>/<job>/<commit>/<variant, or "default" for "">/<index>
//
// where <results> is <Dir>/results, or the Results folder of the
// [Options] the store was opened with. It only computes the path; the
// caller creates the folder (os.MkdirAll) before writing into it. Characters outside [A-Za-z0-9._+,=@-] in the
// job, commit and variant are escaped as %XX, so every part is one safe
// path element. A variant literally named "default" shares the folder of
// the plain build; package job should not allow that name.
func (s *Store) RunDir(k RunKey) string {
	return filepath.Join(s.results, pathElem(k.Job), pathElem(k.Commit),
		pathElem(variantName(k.Variant)), strconv.Itoa(k.Index))
}

func variantName(v string) string {
	if v == "" {
		return "default"
	}
	return v
}

// pathElem escapes s into one path element that cannot climb out of its
// parent.
func pathElem(s string) string {
	switch s {
	case "":
		return "%"
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._+,=@-", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

var runStatuses = map[RunStatus]bool{RunOK: true, RunCrashed: true, RunTimeout: true, RunNoMetric: true, RunError: true}

// validRunKey reports what is wrong with k, or nil.
func validRunKey(k RunKey) error {
	switch {
	case k.Job == "":
		return fmt.Errorf("empty job key")
	case k.Commit == "":
		return fmt.Errorf("empty commit")
	case k.Index < 1:
		return fmt.Errorf("run index %d is not 1 or more", k.Index)
	}
	return nil
}

// valuesPerInsert is how many values one INSERT statement writes
// (4 parameters each; SQLite allows 32766).
const valuesPerInsert = 256

// PutRun stores r and all its values in one transaction, committed (and
// fsynced) before it returns: once PutRun has returned nil, the run survives
// the process being killed. A run already stored under the same key is
// replaced, values included, atomically: readers see the old run or the
// new one, never a mix or a run without its values.
//
// A metric's unit and better direction are fixed by the first run of the
// job that stored it; a value disagreeing with them is an error. NaN values
// are rejected.
func (s *Store) PutRun(ctx context.Context, r *RunRecord) error {
	what := fmt.Sprintf("put run %s", r.RunKey)
	if err := validRunKey(r.RunKey); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	if !runStatuses[r.Status] {
		return fmt.Errorf("store: %s: unknown status %q", what, r.Status)
	}
	if err := checkText("job key", r.Job, "commit", r.Commit, "variant", r.Variant, "reason", r.Reason,
		"stdout path", r.StdoutPath, "stderr path", r.StderrPath, "session", r.Session, "machine", r.Machine, "version", r.Version); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	for i, v := range r.Values {
		if v.Name == "" {
			return fmt.Errorf("store: %s: value %d has no metric name", what, i+1)
		}
		if err := checkText("metric name", v.Name, "unit", v.Unit); err != nil {
			return fmt.Errorf("store: %s: value %d: %w", what, i+1, err)
		}
		if math.IsNaN(v.Value) {
			return fmt.Errorf("store: %s: value %d of metric %q is NaN", what, i+1, v.Name)
		}
	}
	started, err := timeArg("start time", r.Started)
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}

	var added map[string]metricRow
	err = s.write(ctx, what, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `
			INSERT INTO runs (job_key, commit_hash, variant, idx, status, reason, cpu, started_unix_ns,
				wall_ns, user_ns, sys_ns, max_rss_kib, exit_code, stdout_path, stderr_path, recorded_unix_ns, session, machine, version)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (job_key, commit_hash, variant, idx) DO UPDATE SET
				status = excluded.status, reason = excluded.reason, cpu = excluded.cpu,
				started_unix_ns = excluded.started_unix_ns, wall_ns = excluded.wall_ns,
				user_ns = excluded.user_ns, sys_ns = excluded.sys_ns, max_rss_kib = excluded.max_rss_kib,
				exit_code = excluded.exit_code, stdout_path = excluded.stdout_path,
				stderr_path = excluded.stderr_path, recorded_unix_ns = excluded.recorded_unix_ns,
				session = excluded.session, machine = excluded.machine, version = excluded.version
			RETURNING id`,
			r.Job, r.Commit, r.Variant, r.Index, string(r.Status), r.Reason, r.CPU, started,
			int64(r.Usage.Wall), int64(r.Usage.User), int64(r.Usage.Sys), r.Usage.MaxRSSKiB,
			r.ExitCode, r.StdoutPath, r.StderrPath, time.Now().UnixNano(), r.Session, r.Machine, r.Version).Scan(&id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_values WHERE run_id = ?`, id); err != nil {
			return err
		}
		var ids []int64
		ids, added, err = s.metricIDs(ctx, tx, r.Job, r.Values)
		if err != nil {
			return err
		}
		return insertValues(ctx, s.dialect, tx, id, ids, r.Values)
	})
	if err != nil {
		return err
	}
	if len(added) > 0 {
		s.mu.Lock()
		m := s.metrics[r.Job]
		if m == nil {
			m = make(map[string]metricRow, len(added))
			s.metrics[r.Job] = m
		}
		for name, row := range added {
			m[name] = row
		}
		s.mu.Unlock()
	}
	return nil
}

// metricIDs returns the metric id of each value, creating the metrics the
// job has not stored yet; added holds those, to be cached once committed.
func (s *Store) metricIDs(ctx context.Context, tx *sql.Tx, job string, values []metric.Value) (ids []int64, added map[string]metricRow, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	known, ok := s.metrics[job]
	if !ok {
		// Committed rows never change, so what this transaction reads
		// may be cached at once.
		known, err = loadMetrics(ctx, tx, job)
		if err != nil {
			return nil, nil, err
		}
		s.metrics[job] = known
	}
	// Create the metrics not known yet, in first-seen order. Another
	// process may have created some since the cache was filled: on
	// conflict the existing row is returned (by a no-op update, which
	// RETURNING needs).
	var missing []metric.Value
	seen := make(map[string]bool)
	for _, v := range values {
		if _, ok := known[v.Name]; !ok && !seen[v.Name] {
			seen[v.Name] = true
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 && s.dialect == postgresDB {
		// PostgreSQL writers run at once. Two runs creating the same
		// metrics in different orders would wait for each other's
		// uncommitted rows (a deadlock); one creator per job at a time,
		// until it commits, keeps them apart and each run's new metrics
		// numbered together in its first-seen order. A creator holds no
		// other metric row when it waits here, and a writer that has
		// passed here waits for nothing but its own run's row.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?, hashtext(?))`, metricsLockClass, job); err != nil {
			return nil, nil, fmt.Errorf("metrics: %w", err)
		}
	}
	for start := 0; start < len(missing); start += valuesPerInsert {
		chunk := missing[start:min(start+valuesPerInsert, len(missing))]
		args := make([]any, 0, 4*len(chunk))
		for _, v := range chunk {
			args = append(args, job, v.Name, v.Unit, int(v.Better))
		}
		rows, err := tx.QueryContext(ctx, `INSERT INTO metrics (job_key, name, unit, better) VALUES `+
			strings.Repeat("(?, ?, ?, ?), ", len(chunk)-1)+`(?, ?, ?, ?)
			ON CONFLICT (job_key, name) DO UPDATE SET unit = metrics.unit
			RETURNING id, name, unit, better`, args...)
		if err != nil {
			return nil, nil, fmt.Errorf("metrics: %w", err)
		}
		if added == nil {
			added = make(map[string]metricRow, len(missing))
		}
		for rows.Next() {
			var name string
			var row metricRow
			if err := rows.Scan(&row.id, &name, &row.unit, &row.better); err != nil {
				rows.Close()
				return nil, nil, fmt.Errorf("metrics: %w", err)
			}
			added[name] = row
		}
		if err := rows.Close(); err != nil {
			return nil, nil, fmt.Errorf("metrics: %w", err)
		}
		if err := rows.Err(); err != nil {
			return nil, nil, fmt.Errorf("metrics: %w", err)
		}
	}

	ids = make([]int64, len(values))
	for i, v := range values {
		row, ok := known[v.Name]
		if !ok {
			row, ok = added[v.Name]
		}
		if !ok {
			return nil, nil, fmt.Errorf("metric %q was not created", v.Name)
		}
		if row.unit != v.Unit || row.better != v.Better {
			return nil, nil, fmt.Errorf("metric %q has unit %q, better %s, but the job stored it with unit %q, better %s",
				v.Name, v.Unit, v.Better, row.unit, row.better)
		}
		ids[i] = row.id
	}
	return ids, added, nil
}

func loadMetrics(ctx context.Context, tx *sql.Tx, job string) (map[string]metricRow, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, name, unit, better FROM metrics WHERE job_key = ?`, job)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := make(map[string]metricRow)
	for rows.Next() {
		var name string
		var row metricRow
		if err := rows.Scan(&row.id, &name, &row.unit, &row.better); err != nil {
			return nil, err
		}
		m[name] = row
	}
	return m, rows.Err()
}

// insertValues writes the values of run id, valuesPerInsert rows per
// statement; in PostgreSQL, all in one statement of three arrays.
func insertValues(ctx context.Context, d dialect, tx *sql.Tx, id int64, ids []int64, values []metric.Value) error {
	if d == postgresDB {
		return insertValueArrays(ctx, tx, id, ids, values)
	}
	var full *sql.Stmt
	args := make([]any, 0, 4*valuesPerInsert)
	for start := 0; start < len(values); start += valuesPerInsert {
		end := min(start+valuesPerInsert, len(values))
		args = args[:0]
		for i := start; i < end; i++ {
			args = append(args, id, i, ids[i], values[i].Value)
		}
		var err error
		if end-start == valuesPerInsert {
			if full == nil {
				full, err = tx.PrepareContext(ctx, insertValuesSQL(valuesPerInsert))
				if err != nil {
					return err
				}
				defer full.Close()
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, insertValuesSQL(end-start), args...)
		}
		if err != nil {
			return fmt.Errorf("values: %w", err)
		}
	}
	return nil
}

func insertValuesSQL(n int) string {
	return "INSERT INTO run_values (run_id, seq, metric_id, value) VALUES " +
		strings.Repeat("(?, ?, ?, ?), ", n-1) + "(?, ?, ?, ?)"
}

// insertValueArrays is insertValues for PostgreSQL: the values go as three
// arrays (sequence numbers, metric ids, values) that unnest turns into
// rows, one statement for any number of values. (Statements of 256 rows
// of four parameters took 1.5 to 2 times as long for 10,000 values, side
// by side in BenchmarkPutRun10000.)
func insertValueArrays(ctx context.Context, tx *sql.Tx, id int64, ids []int64, values []metric.Value) error {
	if len(values) == 0 {
		return nil
	}
	seqs := make([]int64, len(values))
	vals := make([]float64, len(values))
	for i, v := range values {
		seqs[i], vals[i] = int64(i), v.Value
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO run_values (run_id, seq, metric_id, value)
		SELECT ?::bigint, * FROM unnest(?::bigint[], ?::bigint[], ?::double precision[])`, id, seqs, ids, vals)
	if err != nil {
		return fmt.Errorf("values: %w", err)
	}
	return nil
}
