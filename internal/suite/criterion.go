package suite

import "github.com/perfbot/perfbot/internal/metric"

// criterion: the criterion benchmarks of a Rust repository (cargo bench),
// read from the estimates criterion writes under
// target/criterion/<id>/new/, which the run command prints to stdout as
// JSON lines so the run's log keeps them.
//
//	build: {command: "cargo --config ... bench --offline --no-run"}   # perfbot init writes it
//	suite: {name: criterion, bench: fib, measurement_time: 3}
//
// Offline with Debian's packages: registry: debian (the default) points
// cargo at the crates Debian installs in /usr/share/cargo/registry
// (librust-criterion-dev brings criterion 0.3 and what it needs; Debian 12's
// cargo 0.66 takes --config), so neither the build nor the runs reach
// crates.io. registry: none leaves cargo's own configuration alone.
//
// Metrics: criterion.<id>.mean, .median, .slope, .std_dev and
// .median_abs_dev (ns), and .bytes_per_second or .elements_per_second for
// a benchmark that declares a throughput; the id is criterion's, normalized
// as lkp normalizes names ("fib 20" is fib_20). The benchmarks are the
// repository's, so the suite has no key metric of its own.
func criterion() *Suite {
	return &Suite{
		Name:    "criterion",
		Summary: "Rust criterion benchmarks (cargo bench), their estimates",
		Options: []Option{
			{Name: "bench", Default: "*", Doc: "cargo bench --bench: the bench target(s), a glob (* : every bench target, not the library's own tests)", check: required("a bench target or *")},
			{Name: "filter", Doc: "criterion's benchmark filter (a regular expression)"},
			{Name: "warm_up_time", Default: "1", Doc: "--warm-up-time in seconds (criterion 0.3 takes whole seconds)", check: count(1)},
			{Name: "measurement_time", Default: "3", Doc: "--measurement-time in seconds", check: count(1)},
			{Name: "sample_size", Default: "10", Doc: "--sample-size (criterion's least is 10)", check: count(10)},
			{Name: "registry", Default: "debian", Doc: "debian: build offline from Debian's /usr/share/cargo/registry; none: cargo's own configuration", check: oneOf("debian", "none")},
			{Name: "cargo", Default: "cargo", Doc: "the cargo to run (Debian package cargo)", check: required("the cargo to run")},
			extra("the benchmark (after --)"),
		},
		expand: func(o values, given map[string]bool) (*Use, error) {
			s := newScript("criterion")
			s.need(Program{Command: o.get("cargo"), Package: "cargo"})
			cargo := quote(o.get("cargo"))
			if o.get("registry") == "debian" {
				s.fail(`ls -d /usr/share/cargo/registry/criterion-* >/dev/null 2>&1`,
					"Debian's criterion crate is not installed: install the Debian package librust-criterion-dev (apt-get install librust-criterion-dev)")
				cargo += " " + debianCargo + " --offline"
			}
			s.add("set -e")
			s.add(`target=${CARGO_TARGET_DIR:-target}`)
			s.add(`rm -rf "$target/criterion"`)
			s.add(`%s bench --bench %s -- %s--warm-up-time %s --measurement-time %s --sample-size %s --noplot%s >&2`,
				cargo, quote(o.get("bench")), filterArg(o.get("filter")), o.get("warm_up_time"), o.get("measurement_time"),
				o.get("sample_size"), args(o.get("args")))
			s.add(`find "$target/criterion" -path '*/new/estimates.json' | sort | while IFS= read -r f; do`)
			s.add(`  d=${f%%/estimates.json}`)
			s.add(`  printf '{"benchmark":'; tr -d '\n' <"$d/benchmark.json"; printf ',"estimates":'; tr -d '\n' <"$f"; printf '}\n'`)
			s.add(`done`)
			build := o.get("cargo") + " bench --no-run --bench " + quote(o.get("bench"))
			if o.get("registry") == "debian" {
				build = o.get("cargo") + " " + debianCargo + " bench --offline --no-run --bench " + quote(o.get("bench"))
			}
			u := s.use(build)
			u.Metrics = append(u.Metrics, metric.Spec{Kind: metric.KindFormat, Format: "criterion"})
			return u, nil
		},
	}
}

// debianCargo points cargo at the crates Debian installs.
const debianCargo = `--config 'source.crates-io.replace-with="debian"' --config 'source.debian.directory="/usr/share/cargo/registry"'`

func filterArg(f string) string {
	if f == "" {
		return ""
	}
	return quote(f) + " "
}
