// How a bisection is asked for: Config, its defaults and its checks.

package bisect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/triage"
)

// Defaults of [Config] besides those of the search (DefaultStepRuns,
// DefaultMaxRuns, DefaultAlpha, DefaultEffectPct, DefaultMaxCulprits).
const (
	DefaultPreset    = "c" // the layout knobs of gcc and clang
	DefaultLayouts   = 4   // text layouts of a sweep
	DefaultSpeculate = SpeculateNone
)

// Config asks for a bisection. Env, Job and the two revisions are
// required; every other zero field takes its default.
type Config struct {
	// Env is where the commits are built and measured (this machine, or
	// a fleet's).
	Env measure.Env
	// Job is the atomic job to bisect.
	Job *job.Job
	// Good and Bad are the revisions as the user typed them (--good,
	// --bad), resolved with Env.Repo: Good must be a first-parent
	// ancestor of Bad.
	Good, Bad string
	// Metric is the metric to bisect; "" is the job's first
	// (job.ResolveMetric).
	Metric string
	// Mode is how every commit is built ("" is Plain).
	Mode Mode
	// Preset names the layout knobs of Forced and Sweep, and of the
	// triage ("" is DefaultPreset); Layouts the text layouts of Sweep
	// (DefaultLayouts).
	Preset  string
	Layouts int
	// Improvement searches for the commit that made the metric better.
	Improvement bool
	// Runs are the runs of each end at the first look (default: the
	// fewest with which a first look at a commit can reach Alpha, see
	// [MinRuns]); StepRuns those of a tested commit at its first look;
	// MaxRuns the most of any commit (per layout); CheckRuns the fresh
	// runs of each side of the culprit's check (default: the fewest that
	// can reach Alpha).
	Runs, StepRuns, MaxRuns, CheckRuns int
	// Fixed, when > 0, replaces the tests by the plain "git bisect run"
	// scheme with Fixed runs per commit (no check, no triage).
	Fixed int
	// Alpha is the level of each look of each test; EffectPct the change,
	// in percent, within which two commits count as the same.
	Alpha, EffectPct float64
	// Speculate says how to work ahead ("" is DefaultSpeculate).
	Speculate Speculation
	// Parallel, when > 1, measures that many candidates at once (a
	// fleet's executor): see the search's k-ary steps.
	Parallel int
	// Seed orders the runs; 0 derives it from the job.
	Seed int64
	// Restart forgets the saved state of the same bisection first (the
	// stored runs are still reused).
	Restart bool
	// NoTriage leaves the culprits untriaged. Otherwise a Plain
	// bisection that is not Fixed triages each culprit against its parent
	// (triage.Run with the same Env and Preset).
	NoTriage bool
	// Triage runs the triage of a culprit; nil is triage.Run. A fleet
	// runs each on one machine of its class this way (the experiments of
	// a verdict must come from one machine).
	Triage func(ctx context.Context, cfg triage.Config) (*triage.Result, error)
	// MaxCulprits is the most culprits to name (DefaultMaxCulprits; 1:
	// only the first); ExtraRuns, when > 0, caps the runs taken after the
	// first culprit.
	MaxCulprits, ExtraRuns int
	// FirstParentOnly leaves merges as they are.
	FirstParentOnly bool
	// StateKey names the saved state in the store; "" derives it from
	// everything that changes the bisection's decisions ([StateKey]).
	StateKey string
}

// triages reports whether the bisection triages its culprits.
func (c Config) triages() bool { return c.mode() == Plain && c.Fixed == 0 && !c.NoTriage }

func (c Config) mode() Mode {
	if c.Mode == "" {
		return Plain
	}
	return c.Mode
}

func (c Config) preset() string {
	if c.Preset == "" {
		return DefaultPreset
	}
	return c.Preset
}

// settings are the values that change the bisection's decisions, with
// the defaults perfbot bisect's flags show filled in (the runs of the
// ends and of the check stay 0 when derived from Alpha), so that a
// bisection asked for with and without the defaults spelled out is found
// under one key.
func (c Config) settings() Settings {
	s := Settings{Improvement: c.Improvement, Alpha: c.Alpha, EffectPct: c.EffectPct, EndRuns: c.Runs, StepRuns: c.StepRuns,
		MaxRuns: c.MaxRuns, CheckRuns: c.CheckRuns, Fixed: c.Fixed, FirstParentOnly: c.FirstParentOnly}
	if s.Alpha == 0 {
		s.Alpha = DefaultAlpha
	}
	if s.EffectPct == 0 {
		s.EffectPct = DefaultEffectPct
	}
	if s.StepRuns == 0 {
		s.StepRuns = DefaultStepRuns
	}
	if s.MaxRuns == 0 {
		s.MaxRuns = DefaultMaxRuns
	}
	return s
}

// Check checks everything that needs no build and no run: the revisions
// are given, the metric is the job's, the mode, preset, speculation and
// numbers are in range, with errors that name the flag as perfbot bisect
// spells it. perfbot bisect calls it before it waits for the machine; Run
// calls it again.
func (c Config) Check() error {
	var errs []error
	if c.Job == nil {
		errs = append(errs, errors.New("bisect: no job"))
	}
	if c.Good == "" {
		errs = append(errs, errors.New("--good is required"))
	}
	if c.Bad == "" {
		errs = append(errs, errors.New("--bad is required"))
	}
	if c.Job != nil {
		if _, err := c.Job.ResolveMetric(c.Metric); err != nil {
			errs = append(errs, fmt.Errorf("--metric %q: %w", c.Metric, err))
		}
	}
	if _, err := ParseMode(string(c.Mode)); err != nil {
		errs = append(errs, err)
	}
	if (c.mode() != Plain || c.triages()) && !slices.Contains(knobs.Names(), c.preset()) {
		errs = append(errs, fmt.Errorf("--preset %q: want one of %s", c.preset(), strings.Join(knobs.Names(), ", ")))
	}
	if c.mode() == Sweep && c.Layouts != 0 && (c.Layouts < 2 || c.Layouts > knobs.MaxLayouts) {
		errs = append(errs, fmt.Errorf("--layouts %d: want 2 to %d", c.Layouts, knobs.MaxLayouts))
	}
	if c.Speculate != "" && !slices.Contains(Speculations, c.Speculate) {
		errs = append(errs, fmt.Errorf("--speculate %q: want none, build, runs or auto", c.Speculate))
	}
	errs = append(errs, c.checkRuns()...)
	return errors.Join(errs...)
}

// checkRuns checks the numbers of runs, the level and the effect against
// each other, as the search's defaults fill them in.
func (c Config) checkRuns() []error {
	var errs []error
	s := c.settings()
	if !(s.Alpha > 0 && s.Alpha < 0.5) {
		return []error{fmt.Errorf("--alpha %v: want a level in (0, 0.5)", c.Alpha)}
	}
	if !(s.EffectPct > 0 && s.EffectPct < 1000) {
		errs = append(errs, fmt.Errorf("--effect %v: want a percentage above 0 (and below 1000)", c.EffectPct))
	}
	if s.StepRuns < 1 || s.StepRuns > 100 {
		errs = append(errs, fmt.Errorf("--step-runs %d: want 1 to 100", s.StepRuns))
	}
	if c.Fixed < 0 {
		errs = append(errs, fmt.Errorf("--fixed %d: want 0 (the tests) or more", c.Fixed))
	}
	if c.Fixed == 0 {
		ends := c.Runs
		if ends == 0 {
			ends = MinRuns(s.Alpha, s.StepRuns)
		}
		switch {
		case ends < 3:
			errs = append(errs, fmt.Errorf("--runs %d: want at least 3", c.Runs))
		case s.MaxRuns < ends || s.MaxRuns < s.StepRuns:
			errs = append(errs, fmt.Errorf("--max-runs %d: below the first look (%d runs of each end, --step-runs %d)", s.MaxRuns, ends, s.StepRuns))
		}
	}
	if n := minCheckRuns(s.Alpha); c.CheckRuns != 0 && c.CheckRuns < n {
		errs = append(errs, fmt.Errorf("--check-runs %d: want at least %d of each side for a test at --alpha %v", c.CheckRuns, n, s.Alpha))
	}
	if c.MaxCulprits < 0 {
		errs = append(errs, fmt.Errorf("--max-culprits %d: want 1 or more", c.MaxCulprits))
	}
	if c.ExtraRuns < 0 {
		errs = append(errs, fmt.Errorf("--extra-runs %d: want 0 (no cap) or more", c.ExtraRuns))
	}
	return errs
}
