package suite

// gbench: a Google Benchmark program the job's build makes (a library
// linked into its benchmark: build it against the repository and Debian's
// libbenchmark-dev), read with --benchmark_format=json.
//
//	build: {command: "c++ -O2 -Iinclude bench/bench.cc src/*.cc -o bench -lbenchmark -lpthread"}
//	suite: {name: gbench, binary: ./bench, filter: BM_memcpy}
//
// Metrics: gbench.<benchmark>.real_time and .cpu_time (ns) and one per
// counter (gbench.BM_memcpy/64.bytes_per_second); the benchmark names are
// the program's, so the suite has no key metric of its own: name one in
// the job's metrics (name: gbench.BM_memcpy/64.cpu_time, format: gbench) to
// make it the default of triage and bisect.
func gbench() *Suite {
	return &Suite{
		Name:    "gbench",
		Summary: "a Google Benchmark program the build makes (JSON output)",
		Options: []Option{
			{Name: "binary", Doc: "the benchmark program: a path in the worktree the build makes (./bench), or a name on PATH", check: required("the Google Benchmark program the build makes, e.g. ./bench")},
			{Name: "filter", Doc: "--benchmark_filter (a regular expression)"},
			{Name: "min_time", Doc: "--benchmark_min_time (seconds per benchmark; newer versions also take 0.5s or 100x)", check: matches(reMinTime, "seconds (0.5), or 0.5s or 100x")},
			{Name: "repetitions", Default: "1", Doc: "--benchmark_repetitions (each repetition is a value of the run; perfbot takes their median)", check: count(1)},
			extra("the benchmark program"),
		},
		expand: func(o values, given map[string]bool) (*Use, error) {
			s := newScript("gbench")
			s.need(Program{Command: o.get("binary")})
			cmd := quote(o.get("binary")) + " --benchmark_format=json" + flag("--benchmark_filter", o.get("filter")) +
				flag("--benchmark_min_time", o.get("min_time"))
			if r := o.get("repetitions"); r != "1" {
				cmd += flag("--benchmark_repetitions", r)
			}
			s.add("%s%s", cmd, args(o.get("args")))
			u := s.use("")
			u.Metrics = append(u.Metrics, family("gbench"))
			return u, nil
		},
	}
}
