// Package metric reads benchmark figures out of one run's output.
//
// A job names its metrics with a [Spec]: a regular expression with a named
// group "value" (multi-line: ^ and $ match at line ends), a path into JSON output, the Go benchmark format (read with
// golang.org/x/perf/benchfmt), a benchmark program's own output format
// ([KindFormat]: stress-ng, fio, hackbench, sysbench, redis-benchmark,
// Google Benchmark, hyperfine, pytest-benchmark, Rust criterion; metrics
// named as lkp-tests names them), or one of the resource figures perfbot
// records itself for every run ([Builtins]: wall, user and system time,
// max RSS), or instruction counts ([Instructions]), taken when a job asks.
// Extraction is a pure function of the run's [Output], so a stored run can be
// re-read later with a new spec.
package metric

import (
	"errors"
	"time"
)

// Better says which direction of a metric is an improvement.
type Better int

const (
	// LowerIsBetter is the default for times, sizes and counts of work.
	LowerIsBetter Better = -1
	// HigherIsBetter is for throughputs (ops/s, B/s).
	HigherIsBetter Better = 1
)

func (b Better) String() string {
	switch b {
	case HigherIsBetter:
		return "higher"
	case LowerIsBetter:
		return "lower"
	}
	return "unknown"
}

// Kind is how a Spec reads its values.
type Kind string

const (
	KindRegex   Kind = "regex"   // Spec.Pattern, a multi-line regexp with a named group "value" (and optionally "name")
	KindJSON    Kind = "json"    // Spec.Path, e.g. ".results[0].ops_per_sec"
	KindGoBench Kind = "gobench" // the Go benchmark format; one metric per benchmark name and unit
	KindBuiltin Kind = "builtin" // Spec.Builtin, one of the names in Builtins
	KindFormat  Kind = "format"  // Spec.Format, a benchmark program's own output format (see FormatNames)
)

// Spec describes one metric (or, for gobench and regexes with a "name"
// group, one family of metrics) of a job.
type Spec struct {
	Name    string // metric name; for families, the prefix
	Kind    Kind
	Pattern string // KindRegex
	Path    string // KindJSON
	Builtin string // KindBuiltin: a name listed by BuiltinNames
	Format  string // KindFormat: a name listed by FormatNames
	// Exclude lists metrics a KindFormat family leaves out because other
	// specs of the job read them by name (the job reader sets it), so that
	// no run stores a value twice.
	Exclude []string
	// From is where the values are read: "stdout" (the default), "stderr",
	// or a file path relative to the run's working directory.
	From   string
	Unit   string
	Better Better // 0 means "use the default for the unit or kind"
	// Counter counts the Instructions builtin ("": auto); no other spec
	// has one.
	Counter Counter
}

// Value is one figure read from one run.
type Value struct {
	Name   string
	Unit   string
	Better Better
	Value  float64
}

// Usage is what perfbot itself measured of a run's process tree.
type Usage struct {
	Wall, User, Sys time.Duration
	MaxRSSKiB       int64
}

// Output is everything a Spec may read from one finished run.
type Output struct {
	Stdout, Stderr []byte
	Dir            string // the run's working directory, for Spec.From files
	Usage          Usage
	// Instructions is the run's instruction count, when something counted
	// it beside the run (perf); 0 when nothing did.
	Instructions float64
}

// ErrMissing is wrapped by Extract when the output does not contain the metric.
var ErrMissing = errors.New("metric not found in output")
