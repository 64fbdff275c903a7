package suite

import "github.com/perfbot/perfbot/internal/metric"

// gobench: the Go benchmarks of a Go repository (go test -bench), read in
// the Go benchmark format with golang.org/x/perf/benchfmt, as the job
// key gobench: does.
//
//	suite: {name: gobench, package: ./internal/codec, bench: Encode, benchtime: 100x}
//
// Metrics: gobench.<benchmark>.<unit>, units tidied as benchstat tidies
// them (gobench.Encode/size=1k-8.sec/op, .B/op, .allocs/op, .B/s). lkp has
// no Go suite; the prefix is the suite's name. The benchmarks are the
// repository's, so the suite has no key metric of its own.
func gobench() *Suite {
	return &Suite{
		Name:    "gobench",
		Summary: "Go benchmarks (go test -bench), the Go benchmark format",
		Options: []Option{
			{Name: "package", Default: "./...", Doc: "the packages whose benchmarks to run (go test's arguments, as shell words)", check: required("the packages")},
			{Name: "bench", Default: ".", Doc: "-bench: a regular expression selecting benchmarks", check: required("a -bench expression")},
			{Name: "benchtime", Doc: "-benchtime (1s, 100x)"},
			{Name: "count", Default: "1", Doc: "-count: runs of each benchmark per perfbot run (each is a value; perfbot takes their median)", check: count(1)},
			{Name: "benchmem", Default: "false", Doc: "true: -benchmem (B/op and allocs/op)", check: oneOf("true", "false")},
			{Name: "cpu", Doc: "-cpu: GOMAXPROCS values"},
			{Name: "binary", Doc: "a test binary the build makes (go test -c -o bench.test ./pkg), run instead of go test"},
			{Name: "go", Default: "go", Doc: "the go command (Debian package golang-go, or Go from go.dev)", check: required("the go command")},
			extra("go test (or the test binary)"),
		},
		expand: func(o values, given map[string]bool) (*Use, error) {
			s := newScript("gobench")
			prefix, cmd := "-", ""
			if b := o.get("binary"); b != "" {
				if given["package"] || given["go"] {
					return nil, o.errorf("binary", "runs a test binary: leave package and go out")
				}
				s.need(Program{Command: b})
				prefix, cmd = "-test.", quote(b)
			} else {
				s.need(Program{Command: o.get("go"), Package: "golang-go"})
				cmd = quote(o.get("go")) + " test"
			}
			cmd += " " + prefix + "run='^$' " + prefix + "bench=" + quote(o.get("bench")) + " " + prefix + "count=" + o.get("count")
			if t := o.get("benchtime"); t != "" {
				cmd += " " + prefix + "benchtime=" + quote(t)
			}
			if c := o.get("cpu"); c != "" {
				cmd += " " + prefix + "cpu=" + quote(c)
			}
			if o.get("benchmem") == "true" {
				cmd += " " + prefix + "benchmem"
			}
			cmd += args(o.get("args"))
			if o.get("binary") == "" {
				cmd += " " + o.get("package")
			}
			s.add("%s", cmd)
			u := s.use("")
			u.Metrics = append(u.Metrics, metric.Spec{Kind: metric.KindGoBench, Name: "gobench"})
			return u, nil
		},
	}
}
