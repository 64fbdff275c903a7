package sensitivity

import (
	"fmt"
	"path/filepath"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
)

// The defaults of a Config's zero values.
const (
	// DefaultPreset is the layout-knob preset: C's (gcc and clang).
	DefaultPreset = "c"
	// DefaultLayouts is the number of layouts, the plain build included.
	DefaultLayouts = 4
	// DefaultAlpha is the level of the intervals.
	DefaultAlpha = 0.05
)

// Config is a measurement of sensitivity (perfbot sensitivity).
type Config struct {
	// Env is where the builds are built and measured.
	Env measure.Env
	// Job is the atomic job; Rev the revision as the user typed it.
	Job *job.Job
	Rev string
	// Preset is the layout-knob preset by name ("": DefaultPreset),
	// looked up among the built-in ones with the files its variants refer
	// to under the store's knobs folder.
	Preset string
	// Layouts is the number of layouts, the plain build included (0:
	// DefaultLayouts).
	Layouts int
	// Runs is the number of runs of each build, in whole rounds (0: the
	// job's runs); at least measure.MinCompareRuns.
	Runs int
	// Alpha is the level of the intervals (0: DefaultAlpha).
	Alpha float64
}

// Check checks what can be checked before a session is opened; the
// errors name the flag.
func (c Config) Check() error {
	if c.Job == nil {
		return fmt.Errorf("sensitivity: no job")
	}
	if c.Rev == "" {
		return fmt.Errorf("sensitivity %s: no revision", c.Job.File)
	}
	if c.Layouts < 0 {
		return fmt.Errorf("--layouts %d: want a number of layouts, the plain build included", c.Layouts)
	}
	if c.Runs != 0 && c.Runs < measure.MinCompareRuns {
		return fmt.Errorf("--runs %d: need at least %d runs of each build", c.Runs, measure.MinCompareRuns)
	}
	if !(c.Alpha >= 0 && c.Alpha < 1) {
		return fmt.Errorf("--alpha %g: want a level between 0 and 1", c.Alpha)
	}
	return measure.CheckCPUMode(c.Env.CPU)
}

// preset looks the config's preset up, with its files under the store's
// knobs folder.
func (c Config) preset() (knobs.Preset, error) {
	name := c.Preset
	if name == "" {
		name = DefaultPreset
	}
	p, err := knobs.LookupIn(name, filepath.Join(c.Env.Store.Dir(), "knobs"))
	if err != nil {
		return nil, fmt.Errorf("--preset: %w", err)
	}
	return p, nil
}

func (c Config) layouts() int {
	if c.Layouts > 0 {
		return c.Layouts
	}
	return DefaultLayouts
}

func (c Config) alpha() float64 {
	if c.Alpha > 0 {
		return c.Alpha
	}
	return DefaultAlpha
}

func (c Config) runs() int {
	if c.Runs > 0 {
		return c.Runs
	}
	return c.Job.Runs
}
