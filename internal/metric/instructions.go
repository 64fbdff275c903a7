package metric

import (
	"fmt"
	"strings"
)

// Instructions is the builtin metric of instruction counts, a job file's
// `builtin: instructions` (named "instructions" unless the job names it):
// the user-space instructions the run's processes retired, lower is
// better, in UnitInstructions. Unlike the resource builtins it is a
// metric of the job's own (it gates and is compared like any KPI), and it
// is taken only when the job asks for it, by the spec's Counter.
//
// The count is blind to code and data alignment: moving a loop across a
// cache line or a page changes its time and not its instructions. That
// makes it a metric for runners whose times are noise, and evidence in
// triage: a time that changed while the instructions did not.
const Instructions = "instructions"

// UnitInstructions is the unit of the Instructions metric.
const UnitInstructions = "instructions"

// Counter is what counts the Instructions metric.
type Counter string

const (
	// CounterAuto is perf where this machine's perf counts
	// instructions:u, else callgrind (the default).
	CounterAuto Counter = "auto"
	// CounterPerf counts with perf stat -e instructions:u beside each
	// timed run (cheap; needs hardware counters, which most VMs and CI
	// runners lack).
	CounterPerf Counter = "perf"
	// CounterCallgrind counts with valgrind's callgrind in runs of their
	// own, a few per build, never in the timed runs (exact and
	// deterministic; 20-50 times slower than the program).
	CounterCallgrind Counter = "callgrind"
)

// Counters lists the valid counters.
var Counters = []Counter{CounterAuto, CounterPerf, CounterCallgrind}

// ParseCounter reads a counter as a job file spells it ("" is auto).
func ParseCounter(s string) (Counter, error) {
	if s == "" {
		return CounterAuto, nil
	}
	for _, c := range Counters {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown counter %q (want %s)", s, joinCounters())
}

func joinCounters() string {
	names := make([]string, len(Counters))
	for i, c := range Counters {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// IsInstructions reports whether the spec is the Instructions builtin.
func (s *Spec) IsInstructions() bool {
	return s.Kind == KindBuiltin && s.Builtin == Instructions
}

// InstructionsName is the name the spec's values are stored under.
func (s *Spec) InstructionsName() string {
	if s.Name != "" {
		return s.Name
	}
	return Instructions
}

// extractInstructions reads the count of one run (Output.Instructions,
// set by whatever counted it).
func (s *Spec) extractInstructions(out Output) ([]Value, error) {
	if out.Instructions <= 0 {
		return nil, fmt.Errorf("metric %q: the run's instructions were not counted: %w", s.displayName(), ErrMissing)
	}
	return []Value{{Name: s.InstructionsName(), Unit: UnitInstructions, Better: s.betterOr(LowerIsBetter), Value: out.Instructions}}, nil
}

// instructionsProblems are the checks of an Instructions spec; a counter
// belongs to it alone.
func (s *Spec) instructionsProblems(add func(field, format string, args ...any)) {
	if !s.IsInstructions() {
		if s.Counter != "" {
			add("counter", "only the instructions builtin has a counter")
		}
		return
	}
	if _, err := ParseCounter(string(s.Counter)); err != nil {
		add("counter", "%v", err)
	}
	if s.From != "" {
		add("from", "instructions are counted by perfbot, not read from %q", s.From)
	}
	if s.Unit != "" {
		add("unit", "instructions are counted in %s", UnitInstructions)
	}
	if s.Better == HigherIsBetter {
		add("better", "fewer instructions are better")
	}
}
