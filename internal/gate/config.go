// How a gate is asked for: Config, its defaults and its checks.

package gate

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
)

// Defaults of the gate: section and of Config's zero fields (besides
// DefaultAlpha and DefaultMaxRuns, in decide.go).
const (
	DefaultThresholdPct = 5.0              // the smallest regression that fails, in percent
	DefaultMaxTime      = 15 * time.Minute // measuring and triage, at most
)

// Config asks for a gate. Env and Job are required, and the two
// revisions; the other fields override the job's gate: section, whose
// zero fields take the Default* of this package.
type Config struct {
	// Env is where the revisions are built and measured.
	Env measure.Env
	// Job is the atomic job to gate on.
	Job *job.Job
	// Base and Head are the revisions as the user typed them (the pull
	// request's base and its head), resolved with Env.Repo.
	Base, Head string
	// ThresholdPct, when not 0, is the threshold of every gated metric
	// (--threshold): it overrides the job's gate.threshold and the
	// per-metric thresholds of gate.metrics.
	ThresholdPct float64
	// Metrics, when not empty, are the gated metrics (--metric), in place
	// of gate.metrics; each takes its gate.metrics threshold when the job
	// names one, else the common threshold.
	Metrics []string
	// Alpha overrides gate.alpha (0: the job's, else DefaultAlpha).
	Alpha float64
	// MaxRuns overrides gate.max_runs: the most runs of each revision.
	MaxRuns int
	// MaxTime overrides gate.max_time: the wall time of measuring and
	// triage.
	MaxTime time.Duration
	// NoTriage skips the triage of a regression (as gate.triage: false).
	NoTriage bool
	// Seed orders the runs; 0 derives it from the job and the revisions.
	Seed int64
	// Log receives the triage's lines; nil sends them to Env.Logf.
	Log io.Writer
}

// settings are the gate's numbers once the flags, the job and the
// defaults are merged.
type settings struct {
	thresholdPct float64
	alpha        float64
	maxRuns      int
	maxTime      time.Duration
	triage       bool
	alignment    job.Policy // PolicyPass or PolicyFail
	inconclusive job.Policy // PolicyNeutral, PolicyPass or PolicyFail
}

func (c Config) settings() settings {
	g := c.Job.Gate
	s := settings{thresholdPct: first(c.ThresholdPct, g.ThresholdPct, DefaultThresholdPct),
		alpha:   first(c.Alpha, g.Alpha, DefaultAlpha),
		maxRuns: int(first(float64(c.MaxRuns), float64(g.MaxRuns), DefaultMaxRuns)),
		maxTime: time.Duration(first(float64(c.MaxTime), float64(g.MaxTime), float64(DefaultMaxTime))),
		triage:  !c.NoTriage && !g.NoTriage, alignment: g.Alignment, inconclusive: g.Inconclusive}
	if s.alignment == job.PolicyDefault {
		s.alignment = job.PolicyPass
	}
	if s.inconclusive == job.PolicyDefault {
		s.inconclusive = job.PolicyNeutral
	}
	return s
}

// first is the first of xs that is not 0.
func first(xs ...float64) float64 {
	for _, x := range xs {
		if x != 0 {
			return x
		}
	}
	return 0
}

// Check checks what needs no build and no run: the job, the revisions,
// the overrides and the metrics they name, with errors naming the flag as
// perfbot gate spells it. perfbot gate calls it before it waits for the
// machine; Run calls it again.
func (c Config) Check() error {
	if c.Job == nil {
		return errors.New("gate: no job")
	}
	var errs []error
	if c.Base == "" || c.Head == "" {
		errs = append(errs, errors.New("gate: want the BASE and HEAD revisions"))
	}
	if c.ThresholdPct != 0 && !(c.ThresholdPct > 0 && c.ThresholdPct < 1000) {
		errs = append(errs, fmt.Errorf("--threshold %g: want a change in percent above 0 (and below 1000)", c.ThresholdPct))
	}
	if c.Alpha != 0 && !(c.Alpha > 0 && c.Alpha < 0.5) {
		errs = append(errs, fmt.Errorf("--alpha %g: want a level between 0 and 0.5", c.Alpha))
	}
	if c.MaxRuns != 0 && c.MaxRuns < FirstLook {
		errs = append(errs, fmt.Errorf("--max-runs %d: need at least %d runs of each revision (the gate's first look)", c.MaxRuns, FirstLook))
	}
	if g := c.Job.Gate.MaxRuns; c.MaxRuns == 0 && g != 0 && g < FirstLook {
		errs = append(errs, fmt.Errorf("%s: gate.max_runs %d: the gate needs at least %d runs of each revision (its first look)", c.Job.File, g, FirstLook))
	}
	if c.MaxTime < 0 {
		errs = append(errs, fmt.Errorf("--max-time %s: want a duration above 0", c.MaxTime))
	}
	for _, m := range c.Metrics {
		if _, err := c.Job.ResolveMetric(m); err != nil || m == "" {
			if err == nil {
				err = errors.New("empty name")
			}
			errs = append(errs, fmt.Errorf("--metric %q: %w", m, err))
		}
	}
	if err := measure.CheckCPUMode(c.Env.CPU); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// gated returns the names of the gated metrics and their thresholds,
// when the flags or the job name them (nil: every metric of the job's
// own that the runs stored, at the common threshold).
func (c Config) gated(s settings) (names []string, thresholds map[string]float64) {
	thresholds = map[string]float64{}
	for _, m := range c.Job.Gate.Metrics {
		if m.ThresholdPct > 0 {
			thresholds[m.Name] = m.ThresholdPct
		}
	}
	if c.ThresholdPct != 0 {
		thresholds = map[string]float64{}
	}
	switch {
	case len(c.Metrics) > 0:
		for _, m := range c.Metrics {
			ref, _ := c.Job.ResolveMetric(m) // Check saw it
			names = append(names, ref.Name)
		}
	default:
		for _, m := range c.Job.Gate.Metrics {
			names = append(names, m.Name)
		}
	}
	return names, thresholds
}
