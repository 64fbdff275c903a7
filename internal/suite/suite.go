// Package suite holds perfbot's benchmark suites: for each benchmark
// program kernel and systems people run (stress-ng, hackbench, fio,
// sysbench, redis-benchmark, Google Benchmark, hyperfine, pytest-benchmark,
// Rust criterion, Go benchmarks), the run command that drives it and the
// metric readers of its output, with the metrics named as lkp-tests names
// them ("stress-ng.mutex.ops_per_sec", "hackbench.throughput").
//
// A job file uses a suite with "suite: NAME" or "suite: {name: NAME,
// option: value, ...}" instead of run.command (the build stays the job's),
// and "perfbot init --suite NAME" writes such a job file. [Expand] turns a
// suite and its options into a [Use]: the run command, the metric specs
// (the suite's key metrics by name first, then the family of everything
// else the program printed) and the programs the command runs from PATH,
// each with the Debian package that provides it.
//
// A missing program is reported twice over: [Use.Missing] checks PATH before
// anything is built or run (perfbot's measuring commands call it), and the
// run command itself starts by checking every program it runs, so a run on
// a machine without it, or with a program the build did not make, fails
// with a line that names the Debian package to install.
//
// Every suite is its own file; [All] lists them, explicitly (no suite
// registers itself).
package suite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/metric"
)

// Suite is one benchmark suite.
type Suite struct {
	Name    string
	Summary string // one line: what it runs
	Options []Option
	// expand makes the run command and metrics from every option's value
	// (defaults filled in); given holds the options the job gave.
	expand func(o values, given map[string]bool) (*Use, error)
}

// Option is one parameter of a suite, with its default.
type Option struct {
	Name    string
	Default string // "" : none (optional, or required when check says so)
	Doc     string
	check   func(v string) error // nil: any value
}

// Program is a program a suite's run command runs.
type Program struct {
	// Command is how the run command names it: a name looked up on PATH,
	// or a path (with a '/', relative to the worktree) that the job's
	// build makes.
	Command string
	// Package is the Debian package that provides it ("" for a program
	// only the job's build makes).
	Package string
}

// FromPATH reports whether the program is looked up on PATH (it is
// installed, not built).
func (p Program) FromPATH() bool { return !strings.Contains(p.Command, "/") }

// Use is a suite with its options applied: what a job runs and reads.
type Use struct {
	Suite   string
	Options map[string]string // every option's value, defaults included
	// Command is the run command (run with sh -c in the worktree): it
	// checks its programs, runs the benchmark and prints the output the
	// metrics read on stdout (the program's own log goes to stderr).
	Command string
	// Metrics are the suite's key metrics by name, then the family of
	// every other metric the program printed.
	Metrics  []metric.Spec
	Programs []Program
	// Build is a build command perfbot init suggests ("" : none; the
	// build is the job's).
	Build string
}

// All returns every suite, in the order help and docs list them.
func All() []*Suite {
	return []*Suite{
		stressNG(), hackbench(), fio(), sysbench(), redis(),
		gbench(), hyperfine(), pytestBenchmark(), criterion(), gobench(),
	}
}

// Lookup returns the named suite.
func Lookup(name string) (*Suite, bool) {
	for _, s := range All() {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// Names returns the suites' names.
func Names() []string {
	var names []string
	for _, s := range All() {
		names = append(names, s.Name)
	}
	return names
}

// An OptionError is a problem with one option of a suite ("" for the suite
// itself), for the job reader to point at its line.
type OptionError struct {
	Suite, Option, Msg string
}

func (e *OptionError) Error() string {
	if e.Option == "" {
		return fmt.Sprintf("suite %s: %s", e.Suite, e.Msg)
	}
	return fmt.Sprintf("suite %s: %s: %s", e.Suite, e.Option, e.Msg)
}

// Expand applies options (name -> value, as the job file gives them) to the
// named suite. Unknown options, values an option does not take and
// combinations the suite cannot run are *OptionError.
func Expand(name string, options map[string]string) (*Use, error) {
	s, ok := Lookup(name)
	if !ok {
		return nil, &OptionError{Suite: name, Msg: fmt.Sprintf("no such suite (perfbot has %s)", strings.Join(Names(), ", "))}
	}
	return s.Expand(options)
}

// Expand applies options to the suite; see the function Expand.
func (s *Suite) Expand(options map[string]string) (*Use, error) {
	vals := values{suite: s.Name, v: map[string]string{}}
	given := map[string]bool{}
	var known []string
	for _, o := range s.Options {
		known = append(known, o.Name)
		vals.v[o.Name] = o.Default
	}
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(known, k) {
			return nil, &OptionError{Suite: s.Name, Option: k, Msg: fmt.Sprintf("unknown option (%s takes %s)", s.Name, strings.Join(known, ", "))}
		}
		if strings.ContainsRune(options[k], 0) {
			return nil, &OptionError{Suite: s.Name, Option: k, Msg: "a value may not hold a NUL byte"}
		}
		vals.v[k], given[k] = options[k], true
	}
	for _, o := range s.Options {
		if o.check == nil {
			continue
		}
		if err := o.check(vals.v[o.Name]); err != nil {
			return nil, &OptionError{Suite: s.Name, Option: o.Name, Msg: err.Error()}
		}
	}
	u, err := s.expand(vals, given)
	if err != nil {
		return nil, err
	}
	u.Suite, u.Options = s.Name, vals.v
	metric.ExcludeNamed(u.Metrics)
	return u, nil
}

// values are a suite's option values while it expands.
type values struct {
	suite string
	v     map[string]string
}

func (o values) get(name string) string { return o.v[name] }

// errorf is an OptionError of option name.
func (o values) errorf(name, format string, args ...any) error {
	return &OptionError{Suite: o.suite, Option: name, Msg: fmt.Sprintf(format, args...)}
}

// named is a format metric by name, with its direction (as the format
// gives it, but known before any run); family the rest of the format.
func named(format, name string, better metric.Better) metric.Spec {
	return metric.Spec{Kind: metric.KindFormat, Format: format, Name: name, Better: better}
}

const (
	higher = metric.HigherIsBetter
	lower  = metric.LowerIsBetter
)

func family(format string) metric.Spec {
	return metric.Spec{Kind: metric.KindFormat, Format: format}
}
