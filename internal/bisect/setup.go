package bisect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// Mode is how every commit of a bisection is built and measured.
type Mode string

// The modes.
const (
	Plain  Mode = "plain"  // as the build builds it, like the 0-day robot; the culprit is triaged after
	Forced Mode = "forced" // with functions and loops forced to 64-byte alignment
	Sweep  Mode = "sweep"  // under a sweep of text layouts, the figure the geometric mean over them
)

// ParseMode reads a --layout-robust value: "" is Plain.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", Plain:
		return Plain, nil
	case Forced, Sweep:
		return Mode(s), nil
	}
	return "", fmt.Errorf("--layout-robust %q: want forced or sweep", s)
}

// Variants returns the build variants of the mode with preset's knobs (the
// plain build alone for Plain; layouts text layouts for Sweep) and a line
// that says how.
func (m Mode) Variants(preset knobs.Preset, layouts int) ([]job.Variant, string, error) {
	switch m {
	case Forced:
		v := preset.ForcedAlignment()
		return []job.Variant{v}, fmt.Sprintf("variant %s of the %s knobs", v.Name, preset.Name()), nil
	case Sweep:
		vs := preset.TextLayouts(layouts)
		if len(vs) < 2 {
			return nil, "", fmt.Errorf("--layout-robust sweep: the %s knobs have no text layouts; use --layout-robust forced", preset.Name())
		}
		var names []string
		for _, v := range vs {
			n := v.Name
			if n == "" {
				n = "plain"
			}
			names = append(names, n)
		}
		return vs, fmt.Sprintf("%d text layouts of the %s knobs: %s", len(vs), preset.Name(), strings.Join(names, ", ")), nil
	}
	return []job.Variant{{}}, "", nil
}

// Settings are the values, as the user gave them (0 for a default), that
// change a bisection's decisions besides its job, ends, metric and
// layouts.
//
// The budget of the search for more culprits (MaxCulprits, ExtraRuns) is
// not among them: it bounds the search without changing its decisions, so
// a bisection run again with a larger budget goes on where the smaller one
// stopped.
type Settings struct {
	Improvement                           bool
	Alpha, EffectPct                      float64
	EndRuns, StepRuns, MaxRuns, CheckRuns int
	Fixed                                 int
	FirstParentOnly                       bool
}

// String is the settings' part of a state key. It must not change: saved
// bisections are found by it (settings added later are appended only when
// set, so that the keys of earlier bisections stay the same).
func (s Settings) String() string {
	str := fmt.Sprintf("improvement %v alpha %v effect %v runs %d %d %d %d fixed %d",
		s.Improvement, s.Alpha, s.EffectPct, s.EndRuns, s.StepRuns, s.MaxRuns, s.CheckRuns, s.Fixed)
	if s.FirstParentOnly {
		str += " first-parent"
	}
	return str
}

// AutoSpeculation is what --speculate auto means on this machine: build
// the next candidates ahead when runs are pinned (cpu >= 0) and another
// CPU is free for the builds.
func AutoSpeculation(cpu, allowedCPUs int) Speculation {
	if cpu >= 0 && allowedCPUs >= 2 {
		return SpeculateBuild
	}
	return SpeculateNone
}

// StateKey names a bisection in the store by everything that changes its
// decisions: the job, the ends, the metric, the layouts and the settings.
func StateKey(j *job.Job, good, bad, metricName string, variants []job.Variant, settings Settings) string {
	h := sha256.New()
	fmt.Fprintf(h, "bisect v1\njob %s\ngood %s\nbad %s\nmetric %q\n", j.Key(), good, bad, metricName)
	for _, v := range variants {
		fmt.Fprintf(h, "variant %s\n", measure.VariantID(v))
	}
	fmt.Fprintf(h, "%s\n", settings)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// StateKind is the kind of bisection states in the results store.
const StateKind = "bisect"

// LoadState reads the saved state of the bisection key (nil when there is
// none); restart forgets it first.
func LoadState(ctx context.Context, st *store.Store, key string, restart bool) (*State, error) {
	if restart {
		return nil, st.DeleteState(ctx, StateKind, key)
	}
	data, err := st.GetState(ctx, StateKind, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s := new(State)
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("reading the saved bisection %s in %s: %v (use --restart)", key, st.Path(), err)
	}
	return s, nil
}

// SaveState returns an Options.Save that checkpoints the bisection key.
func SaveState(st *store.Store, key string) func(context.Context, *State) error {
	return func(ctx context.Context, s *State) error {
		data, err := json.Marshal(s)
		if err != nil {
			return err
		}
		return st.PutState(ctx, StateKind, key, data)
	}
}
