// Package qualify measures a runner for a job before anyone trusts the
// pull-request gate on it (perfbot qualify): the false-positive rate of
// A/A gates (the same build on both sides) at the gate's alpha, the noise
// of each gated metric, the smallest change the gate detects at 80 %
// power within its budget, and, when the job names one, the gate's
// detection rate on a real planted slowdown. Every run is stored, and so
// is the qualification (store.Qualification), which the gate quotes.
package qualify

import (
	"errors"
	"fmt"
	"time"

	"github.com/perfbot/perfbot/internal/gate"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
)

// Defaults of a Config's zero fields.
const (
	// DefaultMaxTime bounds a qualification's wall time (the job's
	// qualify.max_time overrides it).
	DefaultMaxTime = 20 * time.Minute
	// DefaultGates is the number of resampled A/A gates.
	DefaultGates = 200
	// MinPairs is the fewest A/A pairs a qualification decides on: the
	// gate's first look.
	MinPairs = gate.FirstLook
)

// Config asks for a qualification. Env and Job are required; every other
// zero field takes its default.
type Config struct {
	Env measure.Env
	Job *job.Job
	// Rev is the revision to build and measure ("": HEAD).
	Rev string
	// MaxTime bounds the wall time, builds included (0: the job's
	// qualify.max_time, else DefaultMaxTime).
	MaxTime time.Duration
	// MaxRuns is the most runs of the plain build (0: two per pair of the
	// gate's budget, 2 x gate.max_runs).
	MaxRuns int
	// Gates is the number of resampled gates (0: DefaultGates).
	Gates int
	// Seed drives the run order and the resampling (0: derived from the
	// job and the commit).
	Seed int64
}

// Check checks what needs no build and no run, naming the flag.
func (c Config) Check() error {
	if c.Job == nil {
		return errors.New("qualify: no job")
	}
	var errs []error
	if c.MaxTime < 0 {
		errs = append(errs, fmt.Errorf("--max-time %s: want a positive duration", c.MaxTime))
	}
	if c.MaxRuns != 0 && c.MaxRuns < 2*MinPairs {
		errs = append(errs, fmt.Errorf("--max-runs %d: need at least %d runs (%d A/A pairs, the gate's first look)", c.MaxRuns, 2*MinPairs, MinPairs))
	}
	if c.Gates < 0 || c.Gates != 0 && c.Gates < 20 {
		errs = append(errs, fmt.Errorf("--gates %d: want at least 20 resampled gates", c.Gates))
	}
	if c.Env.Remote() {
		errs = append(errs, errors.New("qualify measures this machine: a fleet's runs are taken elsewhere"))
	}
	if s := c.Job.Qualify.Slowdown; s != nil {
		for k := range s.Env {
			if _, ok := c.Job.Run.Env[k]; ok {
				errs = append(errs, fmt.Errorf("%s: qualify.slowdown.env.%s: run.env sets %s too, which would override the slowdown", c.Job.File, k, k))
			}
		}
	}
	if err := measure.CheckCPUMode(c.Env.CPU); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c Config) rev() string {
	if c.Rev == "" {
		return "HEAD"
	}
	return c.Rev
}

func (c Config) maxTime() time.Duration {
	switch {
	case c.MaxTime > 0:
		return c.MaxTime
	case c.Job.Qualify.MaxTime > 0:
		return c.Job.Qualify.MaxTime
	}
	return DefaultMaxTime
}

// gatePairs is the gate's budget in pairs (gate.max_runs).
func (c Config) gatePairs() int {
	if c.Job.Gate.MaxRuns > 0 {
		return c.Job.Gate.MaxRuns
	}
	return gate.DefaultMaxRuns
}

func (c Config) maxRuns() int {
	if c.MaxRuns > 0 {
		return c.MaxRuns
	}
	return 2 * c.gatePairs()
}

func (c Config) gates() int {
	if c.Gates > 0 {
		return c.Gates
	}
	return DefaultGates
}

func (c Config) alpha() float64 {
	if c.Job.Gate.Alpha > 0 {
		return c.Job.Gate.Alpha
	}
	return gate.DefaultAlpha
}

func (c Config) gateMaxTime() time.Duration {
	if c.Job.Gate.MaxTime > 0 {
		return c.Job.Gate.MaxTime
	}
	return gate.DefaultMaxTime
}
