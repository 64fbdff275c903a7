package suite

// pytest-benchmark: the benchmark tests of a Python repository (tests
// that take the benchmark fixture), read with --benchmark-json.
//
//	suite: {name: pytest-benchmark, tests: benchmarks/, filter: "not slow"}
//
// Metrics: pytest-benchmark.<test>.mean, .median, .min, .max, .stddev
// (seconds) and .ops (calls per second), the test named as lkp normalizes
// names (test_fib[10] is test_fib_10). The tests are the repository's, so
// the suite has no key metric of its own: name one in the job's metrics to
// make it the default of triage and bisect.
func pytestBenchmark() *Suite {
	return &Suite{
		Name:    "pytest-benchmark",
		Summary: "pytest-benchmark: the benchmark tests of a Python repository",
		Options: []Option{
			{Name: "tests", Default: ".", Doc: "the test files or directories (pytest's arguments, as shell words)", check: required("where the benchmark tests are")},
			{Name: "filter", Doc: "pytest -k expression"},
			{Name: "min_rounds", Doc: "--benchmark-min-rounds", check: matches(reOptSeconds, "a whole number")},
			{Name: "max_time", Doc: "--benchmark-max-time (seconds per test)", check: matches(reOptFloat, "seconds")},
			program("pytest", "python3-pytest-benchmark"),
			extra("pytest"),
		},
		expand: func(o values, given map[string]bool) (*Use, error) {
			s := newScript("pytest-benchmark")
			s.need(Program{Command: o.get("program"), Package: "python3-pytest-benchmark"})
			s.fail(quote(o.get("program"))+" --help 2>/dev/null | grep -q -e --benchmark-json",
				o.get("program")+" has no pytest-benchmark plugin: install the Debian package python3-pytest-benchmark (apt-get install python3-pytest-benchmark)")
			s.add("set -e")
			s.capture("")
			cmd := quote(o.get("program")) + ` -q -p no:cacheprovider --benchmark-only --benchmark-json="$out"` +
				flag("--benchmark-min-rounds", o.get("min_rounds")) + flag("--benchmark-max-time", o.get("max_time"))
			if f := o.get("filter"); f != "" {
				cmd += " -k " + quote(f)
			}
			s.add(`%s%s %s >&2`, cmd, args(o.get("args")), o.get("tests"))
			s.add(`cat "$out"`)
			u := s.use("")
			u.Metrics = append(u.Metrics, family("pytest-benchmark"))
			return u, nil
		},
	}
}
