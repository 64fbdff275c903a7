package metric

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A format metric (KindFormat) reads the output of one benchmark program in
// that program's own format (Spec.Format names it: stress-ng's --yaml file,
// fio's JSON, redis-benchmark's CSV, ...). A format names its metrics in
// full, the way lkp-tests' parser for the program names them
// ("stress-ng.mutex.ops_per_sec", "hackbench.throughput",
// "fio.read_bw_MBps"). A format spec without a name is the family of every
// metric the format reads (less Spec.Exclude); with a name it is that one
// metric, which must be among them.

// format is one program's output format.
type format struct {
	name   string // as job files write it (format: NAME)
	prefix string // every metric it reads is named prefix + "." + member
	doc    string // what it reads, for messages and docs
	// read returns the members' values, named without the prefix, with
	// their units and directions. Output that holds none of the format's
	// results is an error wrapping ErrMissing.
	read func(data []byte) ([]Value, error)
}

// formats lists every format, in the order messages list them. It is built
// here, explicitly: no format registers itself.
var formats = []format{
	{"stress-ng", "stress-ng", "stress-ng's --yaml file, or its --metrics-brief/--metrics log lines", readStressNG},
	{"hackbench", "hackbench", "hackbench's output (Debian's rt-tests)", readHackbench},
	{"fio", "fio", "fio --output-format=json", readFio},
	{"sysbench-cpu", "sysbench-cpu", "sysbench cpu run", readSysbench},
	{"sysbench-memory", "sysbench-memory", "sysbench memory run", readSysbench},
	{"sysbench-threads", "sysbench-threads", "sysbench threads run", readSysbench},
	{"sysbench-mutex", "sysbench-mutex", "sysbench mutex run", readSysbench},
	{"redis-benchmark", "redis", "redis-benchmark --csv", readRedisCSV},
	{"gbench", "gbench", "Google Benchmark --benchmark_format=json", readGBench},
	{"hyperfine", "hyperfine", "hyperfine --export-json", readHyperfine},
	{"pytest-benchmark", "pytest-benchmark", "pytest --benchmark-json", readPytestBenchmark},
	{"criterion", "criterion", `JSON lines {"benchmark": <new/benchmark.json>, "estimates": <new/estimates.json>} of Rust criterion`, readCriterion},
}

func lookupFormat(name string) *format {
	for i := range formats {
		if formats[i].name == name {
			return &formats[i]
		}
	}
	return nil
}

// FormatNames returns the names of the formats, as job files write them.
func FormatNames() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.name
	}
	return names
}

// FormatPrefix returns the prefix every metric of the named format starts
// with (followed by a "."): the lkp test name, "redis" for redis-benchmark.
func FormatPrefix(name string) (string, bool) {
	f := lookupFormat(name)
	if f == nil {
		return "", false
	}
	return f.prefix, true
}

// formatProblems adds the problems of a format spec.
func (s *Spec) formatProblems(add func(field, format string, args ...any)) {
	f := lookupFormat(s.Format)
	switch {
	case s.Format == "":
		return // reported as missing
	case f == nil:
		add("format", "unknown format %q (want one of %s)", s.Format, strings.Join(FormatNames(), ", "))
		return
	}
	if s.Name != "" && !strings.HasPrefix(s.Name, f.prefix+".") {
		add("name", "%s metrics are named %s.<...>, not %q (leave name out to read all of them)", f.name, f.prefix, s.Name)
	}
	if s.Name == "" && s.Better != 0 {
		add("better", "a %s family takes each metric's direction from the format; set better on a named metric", f.name)
	}
	if s.Unit != "" {
		add("unit", "%s metrics have the units the format gives them", f.name)
	}
}

// extractFormat reads data in s.Format.
func (s *Spec) extractFormat(data []byte, where string) ([]Value, error) {
	f := lookupFormat(s.Format)
	vals, err := f.read(data)
	if err == nil && len(vals) == 0 {
		err = fmt.Errorf("no figures: %w", ErrMissing)
	}
	if err != nil {
		return nil, fmt.Errorf("metric %q: reading %s in %s: %w", s.displayName(), f.doc, where, err)
	}
	var out []Value
	var names []string
	for _, v := range vals {
		v.Name = f.prefix + "." + v.Name
		if !slices.Contains(names, v.Name) {
			names = append(names, v.Name)
		}
		switch {
		case s.Name != "" && v.Name != s.Name:
			continue
		case s.Name == "" && slices.Contains(s.Exclude, v.Name):
			continue
		}
		v.Better = s.betterOr(v.Better)
		out = append(out, v)
	}
	if s.Name != "" && len(out) == 0 {
		const show = 12
		list := strings.Join(names[:min(show, len(names))], ", ")
		if len(names) > show {
			list += fmt.Sprintf(", ... (%d in all)", len(names))
		}
		return nil, fmt.Errorf("metric %q: %s in %s has no such metric; it has %s: %w", s.Name, f.name, where, list, ErrMissing)
	}
	return out, nil
}

var (
	lkpSeparators = regexp.MustCompile(`[\s,"_\[\]():]+`)
	lkpDots       = regexp.MustCompile(`\.{4,}`)
)

// LKPName normalizes a free-form name (a test case, a command line, a
// stress-ng metric description) the way lkp-tests' LKP::Stats.normalize
// does: runs of white space, commas, quotes, underscores, brackets,
// parentheses and colons become one "_", with none at either end, and four
// or more dots become one.
func LKPName(s string) string {
	s = lkpSeparators.ReplaceAllString(strings.TrimSpace(s), "_")
	s = strings.Trim(s, "_")
	return lkpDots.ReplaceAllString(s, ".")
}

// rateBetter guesses the direction of a metric from its name: rates
// (per second, /s, rate, bandwidth, throughput) are higher-is-better,
// everything else (times, latencies, counts of overhead) lower-is-better.
func rateBetter(name string) Better {
	n := strings.ToLower(name)
	for _, r := range []string{"per_sec", "per_second", "/sec", "/s", "_rate", "rate_", "bandwidth", "throughput", "ops_per"} {
		if strings.Contains(n, r) {
			return HigherIsBetter
		}
	}
	return LowerIsBetter
}

// Family reports whether s yields a family of metrics rather than one:
// Go benchmarks, a regex with a "name" group, a format without a name.
func (s *Spec) Family() bool {
	switch s.Kind {
	case KindGoBench:
		return true
	case KindFormat:
		return s.Name == ""
	case KindRegex:
		re, err := compileRegex(s.Pattern)
		return err == nil && re.SubexpIndex("name") >= 0
	}
	return false
}

// FamilyPrefix is the prefix of the names a family yields, without the
// ".": a format's lkp test name, a gobench or regex family's name ("" for
// one without a name: any name).
func (s *Spec) FamilyPrefix() string {
	if s.Kind == KindFormat {
		p, _ := FormatPrefix(s.Format)
		return p
	}
	return s.Name
}

// ExcludeNamed sets the Exclude of every format family in specs to the
// metrics the job's other, single metrics read, so that a run stores each
// value once: a job that names stress-ng.mutex.ops_per_sec and reads the
// rest of stress-ng's output as a family gets ops_per_sec from the named
// spec only.
func ExcludeNamed(specs []Spec) {
	for i := range specs {
		f := &specs[i]
		if f.Kind != KindFormat || f.Name != "" {
			continue
		}
		f.Exclude = nil
		for _, s := range specs {
			if s.Name != "" && !s.Family() && !slices.Contains(f.Exclude, s.Name) {
				f.Exclude = append(f.Exclude, s.Name)
			}
		}
	}
}
