// How a triage is asked for: Config, its defaults and its checks.

package triage

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/stats"
)

// Defaults of [Config]: what a zero field means. perfbot triage's help
// shows them.
const (
	DefaultPreset     = "c"  // the layout knobs of gcc and clang
	DefaultMaxRuns    = 40   // the doubling schedule 10 -> 20 -> 40 stops there
	DefaultAlpha      = 0.01 // each look of a sequential test
	DefaultEffectPct  = stats.DefaultEffectPct
	DefaultLayouts    = 4 // the first sweep, the plain build included
	DefaultMaxLayouts = knobs.MaxLayouts
	DefaultLayoutRuns = 3 // runs of each commit under each layout of the sweep
)

// Config asks for a triage. Env and Job are required, and the two
// revisions; every other zero field takes its Default*.
type Config struct {
	// Env is where the commits are built and measured (this machine, or
	// a fleet's).
	Env measure.Env
	// Job is the atomic job to triage.
	Job *job.Job
	// Base and Changed are the revisions as the user typed them (BASE
	// and CHANGED), resolved with Env.Repo.
	Base, Changed string
	// Metric is the metric to triage; "" is the job's first
	// (job.ResolveMetric).
	Metric string
	// Preset names the layout knobs (knobs.Names); "" is DefaultPreset.
	Preset string
	// MaxRuns is the most runs per build in one experiment: the repeat
	// schedule 10 -> 20 -> 40 stops there. At least 10.
	MaxRuns int
	// Alpha is the level of each look of the doubling schedule (10, 20,
	// 40 runs) whose overall error the paired experiments' looks spend,
	// and of each look of the sweep. In (0, 0.25).
	Alpha float64
	// EffectPct is the smallest change, in percent, that counts: a
	// smaller change is no change. In (0, 100).
	EffectPct float64
	// Layouts is the number of layouts of the first sweep (the plain build
	// included), MaxLayouts the most it grows to.
	Layouts, MaxLayouts int
	// LayoutRuns is the number of runs of each commit under each layout of
	// the sweep. At least 2.
	LayoutRuns int
	// Seed orders the runs; 0 derives it from the job and commits.
	Seed int64
	// Log receives one line per experiment step ("triage: ..."); nil
	// sends them to Env.Logf.
	Log io.Writer
}

// withDefaults fills in the zero fields.
func (c Config) withDefaults() Config {
	if c.Preset == "" {
		c.Preset = DefaultPreset
	}
	if c.MaxRuns == 0 {
		c.MaxRuns = DefaultMaxRuns
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if c.EffectPct == 0 {
		c.EffectPct = DefaultEffectPct
	}
	if c.Layouts == 0 {
		c.Layouts = DefaultLayouts
	}
	if c.MaxLayouts == 0 {
		c.MaxLayouts = DefaultMaxLayouts
	}
	if c.LayoutRuns == 0 {
		c.LayoutRuns = DefaultLayoutRuns
	}
	if c.Log == nil {
		c.Log = logfWriter(c.Env.Logf)
	}
	return c
}

// Check checks everything that needs no build and no run: the job, the
// metric, the preset and the ranges of the numbers, with errors that
// name the flag as perfbot triage spells it. perfbot triage calls it
// before it waits for the machine; Run calls it again.
func (c Config) Check() error {
	if c.Job == nil {
		return errors.New("triage: no job")
	}
	c = c.withDefaults()
	var errs []error
	if c.Base == "" || c.Changed == "" {
		errs = append(errs, errors.New("triage: want the BASE and CHANGED revisions"))
	}
	if _, err := c.Job.ResolveMetric(c.Metric); err != nil {
		errs = append(errs, fmt.Errorf("--metric %q: %w", c.Metric, err))
	}
	if !slices.Contains(knobs.Names(), c.Preset) {
		errs = append(errs, fmt.Errorf("--preset %q: want one of %s", c.Preset, strings.Join(knobs.Names(), ", ")))
	}
	if c.MaxRuns < startRuns {
		errs = append(errs, fmt.Errorf("--max-runs %d: want at least %d, the first look", c.MaxRuns, startRuns))
	}
	if !(c.Alpha > 0 && c.Alpha < 0.25) {
		errs = append(errs, fmt.Errorf("--alpha %v: want a value in (0, 0.25)", c.Alpha))
	}
	if !(c.EffectPct > 0 && c.EffectPct < 100) {
		errs = append(errs, fmt.Errorf("--effect %v: want a percentage in (0, 100)", c.EffectPct))
	}
	if c.Layouts < 2 || c.MaxLayouts < c.Layouts || c.MaxLayouts > knobs.MaxLayouts {
		errs = append(errs, fmt.Errorf("--layouts %d, --max-layouts %d: want 2 <= layouts <= max-layouts <= %d", c.Layouts, c.MaxLayouts, knobs.MaxLayouts))
	}
	if c.LayoutRuns < 2 {
		errs = append(errs, fmt.Errorf("triage: %d runs per layout: want at least 2", c.LayoutRuns))
	}
	if len(c.Job.Build.Artifacts) == 0 {
		errs = append(errs, fmt.Errorf("triage: job %s lists no build artifacts: the layout experiments need the binaries (build.artifacts)", c.Job.File))
	}
	return errors.Join(errs...)
}

// logfWriter writes each line it gets to logf (nil: nowhere).
type logfWriter func(format string, args ...any)

func (f logfWriter) Write(p []byte) (int, error) {
	if f != nil {
		for _, l := range strings.Split(strings.TrimSuffix(string(p), "\n"), "\n") {
			f("%s", l)
		}
	}
	return len(p), nil
}
