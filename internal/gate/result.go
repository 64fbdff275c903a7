// What a gate found: its outcome, the decision of every metric, the
// triage of a regression, and the exit status its policy gives.

package gate

import (
	"fmt"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/verdict"
)

// Outcome is what a gate decided. Its values are stable identifiers (the
// JSON report's "outcome").
type Outcome string

// The outcomes.
const (
	// Pass: every gated metric is shown to be within its threshold.
	Pass Outcome = "pass"
	// Regression: a gated metric is significantly worse and its estimate
	// is at least its threshold.
	Regression Outcome = "regression"
	// Alignment: a regression that the triage explained as an alignment
	// artifact (text or data): it passes unless gate.alignment: fail.
	Alignment Outcome = "alignment-artifact"
	// Inconclusive: the budget (max_runs, max_time) was spent before every
	// gated metric was decided.
	Inconclusive Outcome = "inconclusive"
	// Unchanged: the change cannot matter (only ignored paths changed: 0
	// runs), or the builds are byte-identical and the first look agrees.
	Unchanged Outcome = "unchanged"
)

// Exit statuses of perfbot gate.
const (
	ExitPass         = 0
	ExitRegression   = 1
	ExitInconclusive = 3
)

// Result is a gate's answer and the evidence behind it.
type Result struct {
	Outcome Outcome
	// Reason says in words why the gate stopped where it did (the paths
	// of an unchanged diff, the budget an inconclusive gate spent).
	Reason string
	Job    string // the job's name
	JobKey string
	File   string // the job file

	Base, Head gitrev.Commit
	// Changed are the paths the diff touches, when the job declares
	// ignore: globs (the relevance check lists them).
	Changed []string
	// Identical is true when the two builds' artifacts are byte-identical.
	Identical bool

	// Metrics are the gated metrics, then the ones shown and not gated.
	Metrics []Metric
	// Looks taken, and the planned looks (pairs at each).
	Looks   int
	Planned []int
	// Pairs are the rounds the decisions rest on (runs of each revision);
	// NewRuns the runs this invocation took, of both revisions.
	Pairs, NewRuns int

	// The settings the gate ran under.
	ThresholdPct float64
	Alpha        float64
	MaxRuns      int
	MaxTime      time.Duration
	AlignmentPolicy,
	InconclusivePolicy job.Policy

	// Triage is the triage of a regression (nil: none was run).
	Triage *Triage
	// Runner is the machine the runs were taken on.
	Runner Runner
	// Qualification, when the store holds one for this runner and job
	// (perfbot qualify), summarises it; nil otherwise.
	Qualification *Qualification
	// Notes say what the gate could not do or what a reader should know.
	Notes []string
	// Wall is the time the gate took.
	Wall time.Duration
}

// Metric is one metric's decision at the gate's last look.
type Metric struct {
	Decision
	Gated bool
	Unit  string
	// BaseMedian and HeadMedian are the medians of the pairs' values.
	BaseMedian, HeadMedian float64
}

// Triage is what the triage of a regression said.
type Triage struct {
	Metric   string
	Verdict  verdict.Verdict
	Sentence string
	// Evidence are the experiments the verdict rests on, one line each.
	Evidence []string
	Runs     int
	Wall     time.Duration
	// Err is why the triage did not finish ("" when it did).
	Err string
}

// Qualification is a stored qualification of the runner for the job
// (perfbot qualify): quoted by the report so that a reader knows how far
// the runner is to be trusted.
type Qualification struct {
	When              time.Time
	FalsePositiveRate float64 // over the A/A gates
	Gates             int     // A/A gates behind the rate
	DetectablePct     map[string]float64
	Fit               bool
}

// Runner describes the machine the runs were taken on.
type Runner struct {
	Machine  string // the host name the store records
	CPUModel string
	CPUs     int
	Kernel   string
	Load     float64 // the 1-minute load average when the gate began (NaN: unknown)
	Pinned   int     // the CPU the runs were pinned to (-1: none)
}

// Gated are the gated metrics.
func (r *Result) Gated() []Metric {
	var out []Metric
	for _, m := range r.Metrics {
		if m.Gated {
			out = append(out, m)
		}
	}
	return out
}

// ExitStatus is perfbot gate's exit status under the job's policy, and
// for a status that is not the outcome's plain answer a line saying why.
func (r *Result) ExitStatus() (int, string) {
	switch r.Outcome {
	case Regression:
		return ExitRegression, ""
	case Alignment:
		if r.AlignmentPolicy == job.PolicyFail {
			return ExitRegression, "an alignment artifact fails the gate (gate.alignment: fail)"
		}
	case Inconclusive:
		switch r.InconclusivePolicy {
		case job.PolicyPass:
			return ExitPass, ""
		case job.PolicyFail:
			return ExitRegression, "an inconclusive gate fails (gate.inconclusive: fail)"
		}
		return ExitInconclusive, "the gate is inconclusive within its budget"
	}
	return ExitPass, ""
}

// Line is the one-line verdict every report starts with.
func (r *Result) Line() string {
	switch r.Outcome {
	case Unchanged:
		return fmt.Sprintf("unchanged: %s (%d runs)", r.Reason, r.Pairs)
	case Regression:
		return "regression: " + r.regressed()
	case Alignment:
		t := "text"
		if r.Triage != nil && r.Triage.Verdict == verdict.DataAlignment {
			t = "data"
		}
		s := fmt.Sprintf("alignment artifact (%s alignment, not a real regression): %s", t, r.regressed())
		if r.AlignmentPolicy == job.PolicyFail {
			s += "; fails by gate.alignment: fail"
		}
		return s
	case Inconclusive:
		return fmt.Sprintf("inconclusive after %d runs each: %s; %s", r.Pairs, r.metricsLine(func(m Metric) bool { return m.Call != Within }), r.Reason)
	}
	return "no regression: " + r.metricsLine(func(Metric) bool { return true })
}

// regressed lists the regressed metrics: change, interval and threshold.
func (r *Result) regressed() string {
	var parts []string
	for _, m := range r.Gated() {
		if m.Call == Regressed {
			parts = append(parts, fmt.Sprintf("%s %s [%s, %s] beyond the %s threshold", m.Metric, Pct(m.Change), Pct(m.Lo), Pct(m.Hi), Pct0(m.ThresholdPct)))
		}
	}
	return strings.Join(parts, "; ")
}

// metricsLine lists the gated metrics keep selects, each with its change,
// interval and smallest detectable change.
func (r *Result) metricsLine(keep func(Metric) bool) string {
	var parts []string
	for _, m := range r.Gated() {
		if !keep(m) {
			continue
		}
		s := fmt.Sprintf("%s %s [%s, %s]", m.Metric, Pct(m.Change), Pct(m.Lo), Pct(m.Hi))
		if !isNaN(m.DetectablePct) {
			s += fmt.Sprintf("; smallest detectable change here %s", Pct0(m.DetectablePct))
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "no gated metric"
	}
	return strings.Join(parts, "; ")
}

func isNaN(x float64) bool { return x != x }

// Pct writes a signed change in percent ("+12.4 %"); "?" for NaN.
func Pct(x float64) string {
	if isNaN(x) {
		return "?"
	}
	return fmt.Sprintf("%+.1f %%", x)
}

// Pct0 writes an unsigned size in percent ("5 %", "4.2 %"); "?" for NaN.
func Pct0(x float64) string {
	if isNaN(x) {
		return "?"
	}
	if x >= 10 || x == float64(int(x)) {
		return fmt.Sprintf("%.0f %%", x)
	}
	return fmt.Sprintf("%.1f %%", x)
}
