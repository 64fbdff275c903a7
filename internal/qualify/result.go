package qualify

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// Result is a qualification of this runner for a job.
type Result struct {
	Job    string // the job's name
	JobKey string
	Commit gitrev.Commit
	Runner store.Runner
	// CPU is the CPU the runs were pinned to (-1: none).
	CPU                int
	LoadStart, LoadEnd float64
	Alpha              float64

	// Runs are the plain build's OK runs measured (holding every gated
	// metric), Failed its failed ones; Pairs the A/A pairs cut from the
	// runs (with a slowdown, from runs at the same position in their
	// rounds).
	Runs, Failed, Pairs int
	// BudgetPairs is the gate's budget in pairs that every resampled gate
	// is given (its last look); Budget says where it comes from.
	BudgetPairs int
	Budget      string

	// Gates resampled A/A gates, FalsePositives of which failed and
	// Undecided of which ended inconclusive; [FPLo, FPHi] the 95 %
	// Clopper-Pearson interval of the rate; MeanPairs the pairs the gates
	// took on average before deciding.
	Gates, FalsePositives, Undecided int
	FPLo, FPHi                       float64
	MeanPairs                        float64
	// Fit: the false-positive rate is at most Alpha.
	Fit bool

	Metrics  []Metric
	Slowdown *Slowdown // nil: the job names none
	// OrderEffect lists the metrics on which the whole A/A pool, decided
	// as one gate, regressed ("t_ms +10.0 % [+9.8 %, +10.2 %]"): the runner
	// treats the two places of a round differently; it is then not fit.
	OrderEffect []string
	// Advice says what to do when the runner is not fit.
	Advice []string
	// TimeUp: the time budget ended the measuring before MaxRuns.
	TimeUp            bool
	Started, Finished time.Time
	Seed              int64
}

// Metric is one gated metric's figures, in percent.
type Metric struct {
	Name         string
	Better       metric.Better
	ThresholdPct float64
	// NoisePct is the robust standard deviation of the A/A pairs' log
	// ratios (x100).
	NoisePct float64
	// DetectablePct is the smallest planted slowdown the resampled gates
	// catch at 80 % power (NaN: none up to 1000 %); FormulaPct the gate's
	// own estimate from the noise (gate.Design.Detectable), for
	// comparison.
	DetectablePct, FormulaPct float64
}

// Slowdown is the real planted slowdown's result.
type Slowdown struct {
	Name   string // the variant, or the run environment as K=V
	Rounds int    // rounds of plain and slowed runs paired
	Sizes  []Size
	// Gates resampled gates (plain as base, slowed as head), Detected of
	// which failed.
	Gates, Detected int
}

// Size is the slowdown's measured change of one metric: the paired
// test's estimate and its interval at 1-alpha, in percent.
type Size struct {
	Metric         string
	Change, Lo, Hi float64
}

// Rate is the false-positive rate.
func (r *Result) Rate() float64 {
	if r.Gates == 0 {
		return math.NaN()
	}
	return float64(r.FalsePositives) / float64(r.Gates)
}

// ExitStatus is perfbot qualify's: 0 fit, 1 not fit for the gate.
func (r *Result) ExitStatus() (int, string) {
	if r.Fit {
		return 0, ""
	}
	if len(r.OrderEffect) > 0 {
		return 1, fmt.Sprintf("runner %s is not fit for the gate: identical builds differ between the two places of a round (%s)", r.Runner.Hostname, strings.Join(r.OrderEffect, ", "))
	}
	return 1, fmt.Sprintf("runner %s is not fit for the gate: %d of %d A/A gates failed (%.1f %% [%.1f %%, %.1f %%]), above alpha %g", r.Runner.Hostname, r.FalsePositives, r.Gates, 100*r.Rate(), 100*r.FPLo, 100*r.FPHi, r.Alpha)
}

// Detectable is the largest of the metrics' detectable changes (NaN when
// one has none): the change the gate is sure to see on every metric.
func (r *Result) Detectable() float64 {
	d := 0.0
	for _, m := range r.Metrics {
		if math.IsNaN(m.DetectablePct) {
			return math.NaN()
		}
		d = max(d, m.DetectablePct)
	}
	return d
}

// Record is the qualification as the store keeps it.
func (r *Result) Record() *store.Qualification {
	q := &store.Qualification{Job: r.JobKey, Commit: r.Commit.Hash, Runner: r.Runner, LoadStart: r.LoadStart, LoadEnd: r.LoadEnd,
		Alpha: r.Alpha, Runs: r.Runs, Gates: r.Gates, FalsePositives: r.FalsePositives, Fit: r.Fit, Started: r.Started, Finished: r.Finished}
	for _, m := range r.Metrics {
		q.Metrics = append(q.Metrics, store.QualifiedMetric{Name: m.Name, ThresholdPct: m.ThresholdPct, NoisePct: m.NoisePct, DetectablePct: m.DetectablePct})
	}
	if s := r.Slowdown; s != nil {
		q.Slowdown = &store.QualifiedSlowdown{Name: s.Name, Sizes: map[string]float64{}, Gates: s.Gates, Detected: s.Detected, Rounds: s.Rounds}
		for _, z := range s.Sizes {
			if !math.IsNaN(z.Change) && !math.IsInf(z.Change, 0) {
				q.Slowdown.Sizes[z.Metric] = z.Change
			}
		}
	}
	return q
}
