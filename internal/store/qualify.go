package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// Qualification is one perfbot qualify of a runner for a job at a commit:
// how often A/A gates (the same build on both sides) failed, the noise and
// the smallest detectable change per gated metric, and the planted
// slowdown's result. The gate quotes the latest one of its runner.
type Qualification struct {
	Job    string // the job's key
	Commit string // the commit measured
	Runner Runner
	// LoadStart and LoadEnd are the 1-minute load average when the
	// qualification began and ended.
	LoadStart, LoadEnd float64
	Alpha              float64
	Runs               int // OK runs of the plain build measured
	Gates              int // resampled A/A gates
	FalsePositives     int // of them, the gates that failed
	Fit                bool
	Metrics            []QualifiedMetric
	Slowdown           *QualifiedSlowdown // nil: the job names none
	Started, Finished  time.Time
}

// Runner describes the machine that was qualified.
type Runner struct {
	Hostname string `json:"hostname"`
	CPUModel string `json:"cpu_model"`
	Kernel   string `json:"kernel"`
	NProc    int    `json:"nproc"`
}

// QualifiedMetric is one gated metric's figures, in percent; NaN (stored
// as null) when they could not be estimated.
type QualifiedMetric struct {
	Name          string  `json:"name"`
	ThresholdPct  float64 `json:"threshold_pct"`
	NoisePct      float64 `json:"noise_pct"`
	DetectablePct float64 `json:"detectable_pct"`
}

// QualifiedSlowdown is the real planted slowdown's result: its measured
// size per metric (percent) and the share of resampled gates that failed
// on it.
type QualifiedSlowdown struct {
	Name     string             `json:"name"`      // the variant, or the run environment as K=V
	Sizes    map[string]float64 `json:"sizes_pct"` // finite sizes only
	Gates    int                `json:"gates"`
	Detected int                `json:"detected"`
	Rounds   int                `json:"rounds"`
}

// nullable is a float that stores NaN as null.
type nullable float64

func (x nullable) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(x))
}

func (x *nullable) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = nullable(math.NaN())
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*x = nullable(f)
	return err
}

type metricJSON struct {
	Name          string   `json:"name"`
	ThresholdPct  nullable `json:"threshold_pct"`
	NoisePct      nullable `json:"noise_pct"`
	DetectablePct nullable `json:"detectable_pct"`
}

// PutQualification records a qualification (a re-put of the same job,
// hostname and start replaces it).
func (s *Store) PutQualification(ctx context.Context, q *Qualification) error {
	if q.Job == "" || q.Runner.Hostname == "" {
		return errors.New("store: put qualification: want the job key and the runner's hostname")
	}
	if err := checkText("job", q.Job, "commit", q.Commit, "hostname", q.Runner.Hostname, "cpu model", q.Runner.CPUModel, "kernel", q.Runner.Kernel); err != nil {
		return fmt.Errorf("store: put qualification of %s: %w", q.Job, err)
	}
	ms := make([]metricJSON, len(q.Metrics))
	for i, m := range q.Metrics {
		ms[i] = metricJSON{m.Name, nullable(m.ThresholdPct), nullable(m.NoisePct), nullable(m.DetectablePct)}
	}
	mj, err := json.Marshal(ms)
	if err != nil {
		return err
	}
	sj := []byte{}
	if q.Slowdown != nil {
		if sj, err = json.Marshal(q.Slowdown); err != nil {
			return fmt.Errorf("store: put qualification of %s: slowdown: %w", q.Job, err)
		}
	}
	return s.write(ctx, "put qualification of "+q.Job, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO qualifications (job_key, commit_hash, hostname, cpu_model, kernel, nproc, load_start, load_end,
				alpha, runs, gates, false_positives, fit, metrics, slowdown, started_unix_ns, finished_unix_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (job_key, hostname, started_unix_ns) DO UPDATE SET commit_hash = excluded.commit_hash,
				cpu_model = excluded.cpu_model, kernel = excluded.kernel, nproc = excluded.nproc,
				load_start = excluded.load_start, load_end = excluded.load_end, alpha = excluded.alpha,
				runs = excluded.runs, gates = excluded.gates, false_positives = excluded.false_positives,
				fit = excluded.fit, metrics = excluded.metrics, slowdown = excluded.slowdown,
				finished_unix_ns = excluded.finished_unix_ns`,
			q.Job, q.Commit, q.Runner.Hostname, q.Runner.CPUModel, q.Runner.Kernel, q.Runner.NProc, q.LoadStart, q.LoadEnd,
			q.Alpha, q.Runs, q.Gates, q.FalsePositives, boolInt(q.Fit), string(mj), string(sj), q.Started.UnixNano(), q.Finished.UnixNano())
		return err
	})
}

// Qualifications returns the newest n qualifications of a job on the
// runner of that hostname ("": on every runner), newest first.
func (s *Store) Qualifications(ctx context.Context, job, hostname string, n int) ([]Qualification, error) {
	var out []Qualification
	err := s.read(ctx, "list qualifications of "+job, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT job_key, commit_hash, hostname, cpu_model, kernel, nproc, load_start, load_end,
				alpha, runs, gates, false_positives, fit, metrics, slowdown, started_unix_ns, finished_unix_ns
			FROM qualifications WHERE job_key = ? AND (? = '' OR hostname = ?)
			ORDER BY started_unix_ns DESC, hostname LIMIT ?`, job, hostname, hostname, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var q Qualification
			var fit, started, finished int64
			var mj, sj string
			if err := rows.Scan(&q.Job, &q.Commit, &q.Runner.Hostname, &q.Runner.CPUModel, &q.Runner.Kernel, &q.Runner.NProc,
				&q.LoadStart, &q.LoadEnd, &q.Alpha, &q.Runs, &q.Gates, &q.FalsePositives, &fit, &mj, &sj, &started, &finished); err != nil {
				return err
			}
			q.Fit, q.Started, q.Finished = fit != 0, time.Unix(0, started), time.Unix(0, finished)
			var ms []metricJSON
			if err := json.Unmarshal([]byte(mj), &ms); err != nil {
				return fmt.Errorf("qualification of %s at %s: metrics: %w", q.Job, q.Started, err)
			}
			for _, m := range ms {
				q.Metrics = append(q.Metrics, QualifiedMetric{m.Name, float64(m.ThresholdPct), float64(m.NoisePct), float64(m.DetectablePct)})
			}
			if sj != "" {
				q.Slowdown = &QualifiedSlowdown{}
				if err := json.Unmarshal([]byte(sj), q.Slowdown); err != nil {
					return fmt.Errorf("qualification of %s at %s: slowdown: %w", q.Job, q.Started, err)
				}
			}
			out = append(out, q)
		}
		return rows.Err()
	})
	return out, err
}
