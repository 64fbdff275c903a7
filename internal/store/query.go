package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/perfbot/perfbot/internal/metric"
)

// The read side of runs: Runs, Metrics and Samples.

const runColumns = `id, idx, status, reason, cpu, started_unix_ns, wall_ns, user_ns, sys_ns,
	max_rss_kib, exit_code, stdout_path, stderr_path, session, machine, version`

// Runs returns the stored runs of job on commit under variant, ordered by
// Index, each with its Values; failed runs included.
func (s *Store) Runs(ctx context.Context, job, commit, variant string) ([]RunRecord, error) {
	return s.runs(ctx, job, commit, variant, true)
}

// RunsWithoutValues is Runs without loading the values: the runs' keys,
// statuses and usage, cheap even for jobs with many metrics (e.g. to count
// attempted and failed runs).
func (s *Store) RunsWithoutValues(ctx context.Context, job, commit, variant string) ([]RunRecord, error) {
	return s.runs(ctx, job, commit, variant, false)
}

func (s *Store) runs(ctx context.Context, job, commit, variant string, withValues bool) ([]RunRecord, error) {
	var runs []RunRecord
	what := fmt.Sprintf("runs of %s/%s/%s", job, commit, variantName(variant))
	err := s.read(ctx, what, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+runColumns+` FROM runs
			WHERE job_key = ? AND commit_hash = ? AND variant = ? ORDER BY idx`, job, commit, variant)
		if err != nil {
			return err
		}
		defer rows.Close()
		byID := make(map[int64]int)
		for rows.Next() {
			r := RunRecord{RunKey: RunKey{Job: job, Commit: commit, Variant: variant}}
			var id int64
			var started sql.NullInt64
			var wall, user, sys int64
			if err := rows.Scan(&id, &r.Index, &r.Status, &r.Reason, &r.CPU, &started, &wall, &user, &sys,
				&r.Usage.MaxRSSKiB, &r.ExitCode, &r.StdoutPath, &r.StderrPath, &r.Session, &r.Machine, &r.Version); err != nil {
				return err
			}
			r.Started = timeOf(started)
			r.Usage.Wall, r.Usage.User, r.Usage.Sys = time.Duration(wall), time.Duration(user), time.Duration(sys)
			byID[id] = len(runs)
			runs = append(runs, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if !withValues || len(runs) == 0 {
			return nil
		}
		rows, err = tx.QueryContext(ctx, `
			SELECT v.run_id, m.name, m.unit, m.better, v.value
			FROM runs r JOIN run_values v ON v.run_id = r.id JOIN metrics m ON m.id = v.metric_id
			WHERE r.job_key = ? AND r.commit_hash = ? AND r.variant = ?
			ORDER BY r.idx, v.seq`, job, commit, variant)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var v metric.Value
			if err := rows.Scan(&id, &v.Name, &v.Unit, &v.Better, &v.Value); err != nil {
				return err
			}
			r := &runs[byID[id]]
			r.Values = append(r.Values, v)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// Metrics returns the metrics stored for job, in the order they were first
// stored, with their unit and better direction.
func (s *Store) Metrics(ctx context.Context, job string) ([]MetricInfo, error) {
	var ms []MetricInfo
	err := s.read(ctx, fmt.Sprintf("metrics of job %s", job), func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT name, unit, better FROM metrics WHERE job_key = ? ORDER BY id`, job)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var m MetricInfo
			if err := rows.Scan(&m.Name, &m.Unit, &m.Better); err != nil {
				return err
			}
			ms = append(ms, m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return ms, nil
}

// Samples returns, for each of commits, the samples of each metric of job
// under variant: commit -> metric name -> samples in run order (and, within
// a run, in value order). Only OK runs contribute; the values of failed
// runs are never samples. Every requested commit has an entry, empty when
// it has no OK run. Use Metrics for the metrics' units and directions.
func (s *Store) Samples(ctx context.Context, job string, commits []string, variant string) (map[string]map[string][]Sample, error) {
	out := make(map[string]map[string][]Sample, len(commits))
	err := s.read(ctx, fmt.Sprintf("samples of job %s", job), func(tx *sql.Tx) error {
		// Metrics are numbered densely in first-seen order, so values can
		// be gathered in a slice and put in the result map once.
		var (
			names []string
			ids   []int64
			index = make(map[int64]int)
		)
		rows, err := tx.QueryContext(ctx, `SELECT id, name FROM metrics WHERE job_key = ? ORDER BY id`, job)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var name string
			if err := rows.Scan(&id, &name); err != nil {
				return err
			}
			index[id] = len(names)
			names = append(names, name)
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		// The runs' sessions and machines are read apart, one row per
		// run, and shared by the run's samples: reading them with every
		// value would double the time Samples takes.
		runStmt, err := tx.PrepareContext(ctx, `
			SELECT idx, session, machine FROM runs
			WHERE job_key = ? AND commit_hash = ? AND variant = ? AND status = '`+string(RunOK)+`'
			ORDER BY idx`)
		if err != nil {
			return err
		}
		defer runStmt.Close()
		valueStmt, err := tx.PrepareContext(ctx, `
			SELECT r.idx, v.metric_id, v.value
			FROM runs r JOIN run_values v ON v.run_id = r.id
			WHERE r.job_key = ? AND r.commit_hash = ? AND r.variant = ? AND r.status = '`+string(RunOK)+`'
			ORDER BY r.idx, v.seq`)
		if err != nil {
			return err
		}
		defer valueStmt.Close()
		for _, c := range commits {
			if _, done := out[c]; done {
				continue
			}
			samples, err := commitSamples(ctx, runStmt, valueStmt, job, c, variant, ids, index)
			if err != nil {
				return fmt.Errorf("commit %s: %w", c, err)
			}
			byMetric := make(map[string][]Sample)
			for i, ss := range samples {
				if ss != nil {
					byMetric[names[i]] = ss
				}
			}
			out[c] = byMetric
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// commitSamples returns the samples of one commit, indexed like the job's
// metrics: ids[i] is metric i's id, index its inverse. runStmt selects the
// commit's OK runs (index, session, machine) and valueStmt their values,
// both ordered by run index.
func commitSamples(ctx context.Context, runStmt, valueStmt *sql.Stmt, job, commit, variant string, ids []int64, index map[int64]int) ([][]Sample, error) {
	runs, err := okRuns(ctx, runStmt, job, commit, variant)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, nil
	}
	rows, err := valueStmt.QueryContext(ctx, job, commit, variant)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		samples  = make([][]Sample, len(ids))
		idx      intScanner
		metricID intScanner
		value    floatScanner
		last     = -1
		run      = 0 // runs[run] is the run of the current row
		slab     []Sample
	)
	for rows.Next() {
		if err := rows.Scan(&idx, &metricID, &value); err != nil {
			return nil, err
		}
		// Both queries are ordered by index in one snapshot: the run of
		// a row is the current one or a later one.
		for run < len(runs) && runs[run].Run < int(idx) {
			run++
		}
		if run == len(runs) || runs[run].Run != int(idx) {
			return nil, fmt.Errorf("run %d has values but was not read", idx)
		}
		// Runs mostly store their metrics in first-seen order: try the
		// metric after the last one before the map.
		i := last + 1
		if i >= len(ids) || ids[i] != int64(metricID) {
			var ok bool
			i, ok = index[int64(metricID)]
			if !ok {
				return nil, fmt.Errorf("run %d: value of unknown metric id %d", idx, metricID)
			}
		}
		last = i
		if samples[i] == nil {
			// Most metrics have one value per run: make room for as
			// many samples as there are runs, in chunks of a few
			// metrics, rather than growing each metric's slice.
			if len(slab) < len(runs) {
				slab = make([]Sample, samplesPerChunk*len(runs))
			}
			samples[i] = slab[:0:len(runs)]
			slab = slab[len(runs):]
		}
		x := runs[run]
		x.Value = float64(value)
		samples[i] = append(samples[i], x)
	}
	return samples, rows.Err()
}

// samplesPerChunk is how many metrics' samples commitSamples allocates at
// once.
const samplesPerChunk = 64

// okRuns returns the OK runs that runStmt selects, as samples without a
// value.
func okRuns(ctx context.Context, runStmt *sql.Stmt, job, commit, variant string) ([]Sample, error) {
	rows, err := runStmt.QueryContext(ctx, job, commit, variant)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []Sample
	for rows.Next() {
		var r Sample
		if err := rows.Scan(&r.Run, &r.Session, &r.Machine); err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

// intScanner and floatScanner scan SQLite integers and reals without the
// reflection database/sql otherwise uses for numeric destinations.
type (
	intScanner   int64
	floatScanner float64
)

func (p *intScanner) Scan(src any) error {
	v, ok := src.(int64)
	if !ok {
		return fmt.Errorf("got %T, want an integer", src)
	}
	*p = intScanner(v)
	return nil
}

func (p *floatScanner) Scan(src any) error {
	switch v := src.(type) {
	case float64:
		*p = floatScanner(v)
	case int64:
		*p = floatScanner(v)
	default:
		return fmt.Errorf("got %T, want a real", src)
	}
	return nil
}
