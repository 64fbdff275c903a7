package job

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/metric"
)

const minimal = `repo: ../kvstore            # git repository, relative to the job file
build:
  command: make bench       # run in a worktree of the commit
  artifacts: [bench]        # files whose layout matters (the binaries)
run:
  command: ./bench 20000 1  # run in the same worktree
  timeout: 60s
runs: 6
metrics:
  - name: text_ms
    regex: 'text_ms: (?P<value>[0-9.]+)'
    better: lower           # or higher
`

func mustParse(t *testing.T, file, src string) []*Job {
	t.Helper()
	jobs, err := Parse(file, []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return jobs
}

func TestMinimal(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "kvstore"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "jobs"), 0o777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "jobs", "kvstore.yaml")
	if err := os.WriteFile(path, []byte(minimal), 0o666); err != nil {
		t.Fatal(err)
	}
	jobs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &Job{
		File: path,
		Name: "kvstore",
		Repo: filepath.Join(dir, "kvstore"),
		Build: Build{
			Command:   "make bench",
			Artifacts: []string{"bench"},
			Env:       map[string]string{},
			Timeout:   30 * time.Minute,
		},
		Run:    Run{Command: "./bench 20000 1", Timeout: 60 * time.Second, Env: map[string]string{}, CPU: "auto"},
		Runs:   6,
		Warmup: 0,
		Metrics: []metric.Spec{
			{Name: "text_ms", Kind: metric.KindRegex, Pattern: "text_ms: (?P<value>[0-9.]+)", Better: metric.LowerIsBetter},
		},
		Variants: []Variant{},
		Params:   map[string]string{},
	}
	if len(jobs) != 1 || !reflect.DeepEqual(jobs[0], want) {
		t.Fatalf("Load =\n%+v\nwant\n%+v", jobs[0], want)
	}

	// Load checks the repository; Parse does not.
	if err := os.Remove(filepath.Join(dir, "kvstore")); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	wantErr := path + ":1: repo: " + filepath.Join(dir, "kvstore") + " does not exist"
	if err == nil || err.Error() != wantErr {
		t.Fatalf("Load without repo: %v\nwant %s", err, wantErr)
	}
	if err := os.WriteFile(filepath.Join(dir, "kvstore"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err = Load(path); err == nil || !strings.HasSuffix(err.Error(), "kvstore is not a directory") {
		t.Fatalf("Load with a file as repo: %v", err)
	}
	if _, err := Parse(path, []byte(minimal)); err != nil {
		t.Fatalf("Parse without repo: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "none.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load(missing file) = %v", err)
	}
}

const full = `name: kv
repo: /src/kvstore
build:
  command: make CFLAGS="$CFLAGS -DSIZE=${size}" bench
  artifacts: [bench, lib/libkv.so]
  env: {CC: gcc, JOBS: 4}
  timeout: 5m
run:
  command: ./bench ${size} ${threads} ${HOME}
  env:
    MALLOC_ARENA_MAX: 2
    SIZE: "size-${size}"
  timeout: 2m
  cpu: 3
runs: 10
warmup: 2
metrics:
  - name: text_ms
    regex: 'text_ms: (?P<value>[0-9.]+)'
    unit: ms
    better: lower
  - name: ops
    json: .results[0].ops_per_sec
    from: out/result.json
    better: higher
  - gobench: go
  - gobench: true
    unit: ns/op
  - builtin: wall
  - name: rss
    builtin: time.maximum_resident_set_size
variants:
  o3: {env: {CFLAGS: -O3}}
  align.64:
    env: {CFLAGS: "-falign-functions=64 -DN=${size}"}
params:
  size: [1000, 20000]
  threads: 4
`

func TestFull(t *testing.T) {
	jobs := mustParse(t, "jobs/kv.yaml", full)
	if len(jobs) != 2 {
		t.Fatalf("got %d jobs, want 2", len(jobs))
	}
	j := jobs[1]
	want := &Job{
		File: j.File, // absolute path of jobs/kv.yaml, checked below
		Name: "kv/size=20000/threads=4",
		Repo: "/src/kvstore",
		Build: Build{
			Command:   `make CFLAGS="$CFLAGS -DSIZE=20000" bench`,
			Artifacts: []string{"bench", "lib/libkv.so"},
			Env:       map[string]string{"CC": "gcc", "JOBS": "4", "PERFBOT_PARAM_SIZE": "20000", "PERFBOT_PARAM_THREADS": "4"},
			Timeout:   5 * time.Minute,
		},
		Run: Run{
			Command: "./bench 20000 4 ${HOME}",
			Env:     map[string]string{"MALLOC_ARENA_MAX": "2", "SIZE": "size-20000", "PERFBOT_PARAM_SIZE": "20000", "PERFBOT_PARAM_THREADS": "4"},
			Timeout: 2 * time.Minute,
			CPU:     "3",
		},
		Runs:   10,
		Warmup: 2,
		Metrics: []metric.Spec{
			{Name: "text_ms", Kind: metric.KindRegex, Pattern: "text_ms: (?P<value>[0-9.]+)", Unit: "ms", Better: metric.LowerIsBetter},
			{Name: "ops", Kind: metric.KindJSON, Path: ".results[0].ops_per_sec", From: "out/result.json", Better: metric.HigherIsBetter},
			{Name: "go", Kind: metric.KindGoBench},
			{Kind: metric.KindGoBench, Unit: "ns/op"},
			{Kind: metric.KindBuiltin, Builtin: metric.BuiltinWall},
			{Name: "rss", Kind: metric.KindBuiltin, Builtin: metric.BuiltinMaxRSS},
		},
		Variants: []Variant{
			{Name: "o3", Env: map[string]string{"CFLAGS": "-O3"}},
			{Name: "align.64", Env: map[string]string{"CFLAGS": "-falign-functions=64 -DN=20000"}},
		},
		Params: map[string]string{"size": "20000", "threads": "4"},
	}
	if !reflect.DeepEqual(j, want) {
		t.Fatalf("job =\n%+v\nwant\n%+v", j, want)
	}
	if abs, _ := filepath.Abs("jobs/kv.yaml"); j.File != abs {
		t.Errorf("File = %q, want %q", j.File, abs)
	}
	if jobs[0].Name != "kv/size=1000/threads=4" || jobs[0].Run.Command != "./bench 1000 4 ${HOME}" {
		t.Errorf("job 0 = %q %q", jobs[0].Name, jobs[0].Run.Command)
	}
	// The atomic jobs share no maps.
	jobs[0].Run.Env["X"] = "1"
	jobs[0].Variants[0].Env["X"] = "1"
	if _, ok := jobs[1].Run.Env["X"]; ok {
		t.Error("jobs share Run.Env")
	}
	if _, ok := jobs[1].Variants[0].Env["X"]; ok {
		t.Error("jobs share variant env")
	}

	if v, ok := j.Variant("align.64"); !ok || v.Env["CFLAGS"] != "-falign-functions=64 -DN=20000" {
		t.Errorf(`Variant("align.64") = %+v, %v`, v, ok)
	}
	if v, ok := j.Variant(""); !ok || v.Name != "" || len(v.Env) != 0 {
		t.Errorf(`Variant("") = %+v, %v`, v, ok)
	}
	if _, ok := j.Variant("o2"); ok {
		t.Error(`Variant("o2") found`)
	}
}

func TestMatrix(t *testing.T) {
	src := strings.Replace(minimal, "runs: 6\n", `params:
  size: [1000, 20000]
  mode: [read, write, mixed]
  threads: 4
`, 1)
	src = strings.Replace(src, "./bench 20000 1", "./bench -mode=${mode} ${size} ${threads}", 1)
	jobs := mustParse(t, "jobs/kvstore.yaml", src)
	var got []string
	for _, j := range jobs {
		got = append(got, j.Name+" | "+j.Run.Command+" | "+j.Run.Env["PERFBOT_PARAM_MODE"])
	}
	want := []string{
		"kvstore/size=1000/mode=read/threads=4 | ./bench -mode=read 1000 4 | read",
		"kvstore/size=1000/mode=write/threads=4 | ./bench -mode=write 1000 4 | write",
		"kvstore/size=1000/mode=mixed/threads=4 | ./bench -mode=mixed 1000 4 | mixed",
		"kvstore/size=20000/mode=read/threads=4 | ./bench -mode=read 20000 4 | read",
		"kvstore/size=20000/mode=write/threads=4 | ./bench -mode=write 20000 4 | write",
		"kvstore/size=20000/mode=mixed/threads=4 | ./bench -mode=mixed 20000 4 | mixed",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("matrix =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	keys := make(map[string]bool)
	for _, j := range jobs {
		keys[j.Key()] = true
	}
	if len(keys) != len(jobs) {
		t.Errorf("%d atomic jobs have %d distinct keys", len(jobs), len(keys))
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		desc string
		src  string
		want []string // the whole error, one line per problem
	}{
		{"malformed YAML", "repo: x\nbuild:\n  command: make\n run: x\n",
			[]string{"x.yaml:3: invalid YAML: did not find expected key"}},
		{"tab indentation", "repo: x\nbuild:\n\tcommand: make\n",
			[]string{"x.yaml:3: invalid YAML: found character that cannot start any token"}},
		{"empty", "# nothing\n", []string{"x.yaml: empty job file"}},
		{"two documents", minimal + "---\nrepo: y\n", []string{"x.yaml:13: a job file holds one YAML document; another starts here"}},
		{"not a mapping", "- repo: x\n", []string{`x.yaml:1: a job file is a mapping of fields (repo, build, run, metrics, ...), not a list`}},
		{"unknown field", strings.Replace(minimal, "runs: 6", "iters: 6", 1),
			[]string{`x.yaml:8: unknown field "iters" (did you mean "runs"?)`}},
		{"misspelt field", strings.Replace(minimal, "  timeout: 60s", "  timout: 60s", 1),
			[]string{`x.yaml:7: run: unknown field "timout" (did you mean "timeout"?)`}},
		{"unknown field, no suggestion", minimal + "owner: me\n", []string{`x.yaml:13: unknown field "owner"`}},
		{"runs: 2", strings.Replace(minimal, "runs: 6", "runs: 2", 1),
			[]string{"x.yaml:8: runs: must be at least 3, got 2 (fewer runs cannot show a change)"}},
		{"runs not an integer", strings.Replace(minimal, "runs: 6", "runs: six", 1),
			[]string{`x.yaml:8: runs: expected an integer, got "six"`}},
		{"runs a list", strings.Replace(minimal, "runs: 6", "runs: [6]", 1),
			[]string{`x.yaml:8: runs: expected an integer, got a list`}},
		{"negative warmup", minimal + "warmup: -1\n", []string{"x.yaml:13: warmup: must not be negative, got -1"}},
		{"bad duration", strings.Replace(minimal, "timeout: 60s", "timeout: 6o s", 1),
			[]string{`x.yaml:7: run.timeout: invalid duration "6o s"`}},
		{"duration without unit", strings.Replace(minimal, "timeout: 60s", "timeout: 60", 1),
			[]string{`x.yaml:7: run.timeout: invalid duration "60" (a duration needs a unit: 60s)`}},
		{"zero duration", strings.Replace(minimal, "timeout: 60s", "timeout: 0s", 1),
			[]string{`x.yaml:7: run.timeout: must be positive, got 0s`}},
		{"missing build.command", strings.Replace(minimal, "  command: make bench       # run in a worktree of the commit\n", "", 1),
			[]string{"x.yaml:3: build.command: missing (the shell command that builds one commit)"}},
		{"empty run.command", strings.Replace(minimal, "./bench 20000 1  # run in the same worktree", `""`, 1),
			[]string{"x.yaml:6: run.command: must not be empty"}},
		{"null run.command", strings.Replace(minimal, "./bench 20000 1  # run in the same worktree", "", 1),
			[]string{"x.yaml:6: run.command: missing value"}},
		{"build a string", strings.Replace(minimal, "build:\n  command: make bench       # run in a worktree of the commit\n  artifacts: [bench]        # files whose layout matters (the binaries)\n", "build: make\n", 1),
			[]string{`x.yaml:2: build: expected a mapping, got "make"`}},
		{"missing everything", "name: x\n", []string{
			"x.yaml:1: repo: missing (the git repository to build, relative to the job file)",
			"x.yaml:1: build: missing (build.command builds one commit)",
			"x.yaml:1: run: missing (run.command runs the benchmark once, or suite: names a suite that does)",
			"x.yaml:1: metrics: missing (the figures to read from each run, or suite: names a suite that reads them)",
		}},
		{"metric with two kinds", strings.Replace(minimal, "    better: lower", "    json: .a\n    better: lower", 1),
			[]string{"x.yaml:12: metrics[0].json: a metric has exactly one of regex, json, gobench, builtin or format; this one also has regex"}},
		{"metric with no kind", strings.Replace(minimal, "    regex: 'text_ms: (?P<value>[0-9.]+)'\n", "", 1),
			[]string{"x.yaml:10: metrics[0]: a metric needs one of regex, json, gobench, builtin or format"}},
		{"bad regex", strings.Replace(minimal, "(?P<value>[0-9.]+)'", "(?P<value>[0-9.]+'", 1),
			[]string{"x.yaml:11: metrics[0].regex: error parsing regexp: missing closing ): `text_ms: (?P<value>[0-9.]+`"}},
		{"regex without value group", strings.Replace(minimal, "(?P<value>[0-9.]+)'", "([0-9.]+)'", 1),
			[]string{`x.yaml:11: metrics[0].regex: "text_ms: ([0-9.]+)" has no group named "value" (write (?P<value>...))`}},
		{"better missing", strings.Replace(minimal, "    better: lower           # or higher\n", "", 1),
			[]string{"x.yaml:11: metrics[0].better: required for regex metrics: lower or higher"}},
		{"better wrong", strings.Replace(minimal, "better: lower", "better: less", 1),
			[]string{`x.yaml:12: metrics[0].better: want lower or higher, got "less"`}},
		{"json path", minimal + "  - name: ops\n    json: .results[x]\n    better: higher\n",
			[]string{`x.yaml:14: metrics[1].json: path ".results[x]": invalid index [x] (want a non-negative integer)`}},
		{"unknown builtin", minimal + "  - builtin: rss\n",
			[]string{`x.yaml:13: metrics[1].builtin: unknown builtin "rss" (want wall, user, sys, maxrss, instructions or one of time.elapsed_time, time.user_time, time.system_time, time.maximum_resident_set_size)`}},
		{"builtin from", minimal + "  - builtin: wall\n    from: stderr\n",
			[]string{`x.yaml:14: metrics[1].from: builtin metrics are measured by perfbot, not read from "stderr"`}},
		{"gobench false", minimal + "  - gobench: false\n", []string{"x.yaml:13: metrics[1].gobench: want true or a metric name prefix, got \"false\""}},
		{"gobench prefix twice", minimal + "  - gobench: go\n    name: go2\n",
			[]string{"x.yaml:13: metrics[1].gobench: give the name prefix either here or in name:, not both"}},
		{"duplicate metric", minimal + "  - name: text_ms\n    builtin: wall\n",
			[]string{`x.yaml:13: metrics[1].name: metric "text_ms" is already defined on line 10`}},
		{"no metrics", strings.Replace(minimal, "metrics:\n", "metrics: []\nx:\n", 1), []string{
			"x.yaml:9: metrics: at least one metric is required (builtin: wall times the whole run)",
			`x.yaml:10: unknown field "x"`,
		}},
		{"duplicate field", minimal + "runs: 7\n", []string{"x.yaml:13: runs: given twice"}},
		{"bad variant name", minimal + "variants:\n  O3: {env: {CFLAGS: -O3}}\n",
			[]string{"x.yaml:14: variants.O3: a variant name is made of a-z, 0-9, '_', '.' and '-'"}},
		{"variant unknown field", minimal + "variants:\n  o3: {evn: {CFLAGS: -O3}}\n",
			[]string{`x.yaml:14: variants.o3: unknown field "evn" (did you mean "env"?)`}},
		{"variant without env", minimal + "variants:\n  o3:\n",
			[]string{"x.yaml:14: variants.o3: missing env: (the variant's extra build environment)"}},
		{"variant with empty mapping", minimal + "variants:\n  o3: {}\n",
			[]string{"x.yaml:14: variants.o3: missing env: (the variant's extra build environment)"}},
		{"env sets PERFBOT_COMMIT", minimal + "variants:\n  o3: {env: {PERFBOT_COMMIT: x, PERFBOT_VARIANT: y}}\n", []string{
			"x.yaml:14: variants.o3.env.PERFBOT_COMMIT: perfbot sets PERFBOT_COMMIT for every build and run",
			"x.yaml:14: variants.o3.env.PERFBOT_VARIANT: perfbot sets PERFBOT_VARIANT for every build and run",
		}},
		{"NUL in env and command", strings.Replace(minimal, "make bench ", `"make\0bench"`, 1) + "variants:\n  o3: {env: {A: \"x\\0\"}}\n", []string{
			`x.yaml:3: build.command: "make\x00bench" holds a NUL byte, which no command or environment can carry`,
			`x.yaml:14: variants.o3.env.A: "x\x00" holds a NUL byte, which no command or environment can carry`,
		}},
		{"artifact twice, artifact the worktree", strings.Replace(minimal, "[bench]", "[bench, ./bench, ., lib/]", 1), []string{
			`x.yaml:4: build.artifacts[1]: "./bench" is listed twice (as "bench" before)`,
			`x.yaml:4: build.artifacts[2]: "." is the whole worktree; list the files whose layout matters`,
		}},
		{"bad env name", minimal + "variants:\n  o3: {env: {C-FLAGS: -O3}}\n",
			[]string{"x.yaml:14: variants.o3.env.C-FLAGS: invalid environment variable name"}},
		{"reserved env", strings.Replace(minimal, "  timeout: 60s", "  timeout: 60s\n  env: {PERFBOT_PARAM_SIZE: 1}", 1),
			[]string{"x.yaml:8: run.env.PERFBOT_PARAM_SIZE: the PERFBOT_PARAM_* variables are set from params"}},
		{"env value a list", strings.Replace(minimal, "  timeout: 60s", "  timeout: 60s\n  env: {A: [1]}", 1),
			[]string{"x.yaml:8: run.env.A: expected a string, got a list"}},
		{"bad cpu", strings.Replace(minimal, "  timeout: 60s", "  timeout: 60s\n  cpu: first", 1),
			[]string{`x.yaml:8: run.cpu: want auto, none or a CPU number, got "first"`}},
		{"artifact outside the worktree", strings.Replace(minimal, "[bench]", "[bench, ../x]", 1),
			[]string{`x.yaml:4: build.artifacts[1]: "../x" must be a path inside the worktree`}},
		{"bad param name", minimal + "params:\n  my-size: [1, 2]\n",
			[]string{"x.yaml:14: params.my-size: a param name is a letter or '_' followed by letters, digits or '_'"}},
		{"param names clash", minimal + "params:\n  size: 1\n  SIZE: 2\n",
			[]string{`x.yaml:15: params.SIZE: same environment variable PERFBOT_PARAM_SIZE as param "size"`}},
		{"param value twice", minimal + "params:\n  size: [1, 2, 1]\n",
			[]string{`x.yaml:14: params.size[2]: value "1" is listed twice`}},
		{"param empty list", minimal + "params:\n  size: []\n", []string{"x.yaml:14: params.size: an empty list gives no jobs"}},
		{"param nested", minimal + "params:\n  size: {a: 1}\n",
			[]string{"x.yaml:14: params.size: expected a value or a list of values, got a mapping"}},
		{"matrix too big", minimal + "params:\n  a: [1,2,3,4,5,6,7,8,9,10]\n  b: [1,2,3,4,5,6,7,8,9,10]\n  c: [1,2,3,4,5,6,7,8,9,10]\n  d: [1,2]\n",
			[]string{"x.yaml:14: params: the matrix expands to more than 1000 jobs"}},
		{"bad name", "name: my job\n" + minimal, []string{`x.yaml:1: name: "my job" may not contain white space or '/'`}},
		{"bad regex and bad better", strings.NewReplacer("(?P<value>[0-9.]+)'", "(?P<value>[0-9.]+'", "better: lower", "better: less").Replace(minimal), []string{
			"x.yaml:11: metrics[0].regex: error parsing regexp: missing closing ): `text_ms: (?P<value>[0-9.]+`",
			`x.yaml:12: metrics[0].better: want lower or higher, got "less"`,
		}},
		{"every problem of a metric", minimal + "  - json: .a[x]\n    from: /tmp/out.json\n", []string{
			"x.yaml:13: metrics[1].better: required for json metrics: lower or higher",
			`x.yaml:13: metrics[1].json: path ".a[x]": invalid index [x] (want a non-negative integer)`,
			"x.yaml:13: metrics[1].name: a name is required",
			`x.yaml:14: metrics[1].from: "/tmp/out.json" must be stdout, stderr or a relative path inside the run directory`,
		}},
		{"regex without value group, unnamed, empty unit", minimal + "  - regex: 'n: ([0-9]+)'\n    unit: ''\n    better: lower\n", []string{
			`x.yaml:13: metrics[1].regex: "n: ([0-9]+)" has no group named "value" (write (?P<value>...))`,
			`x.yaml:13: metrics[1].name: a name is required (or a group named "name" in the regex)`,
			"x.yaml:14: metrics[1].unit: must not be empty",
		}},
		{"several problems at once, in line order", strings.NewReplacer("runs: 6", "runs: 1", "timeout: 60s", "timeout: 1 minute", "better: lower", "better: up").Replace(minimal), []string{
			`x.yaml:7: run.timeout: invalid duration "1 minute"`,
			"x.yaml:8: runs: must be at least 3, got 1 (fewer runs cannot show a change)",
			`x.yaml:12: metrics[0].better: want lower or higher, got "up"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			jobs, err := Parse("x.yaml", []byte(tt.src))
			if err == nil {
				t.Fatalf("Parse succeeded with %d jobs, want errors:\n%s", len(jobs), strings.Join(tt.want, "\n"))
			}
			if jobs != nil {
				t.Errorf("Parse returned jobs with an error")
			}
			if got := err.Error(); got != strings.Join(tt.want, "\n") {
				t.Fatalf("Parse error:\n%s\nwant:\n%s", got, strings.Join(tt.want, "\n"))
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) != len(tt.want) {
				t.Fatalf("error is %T with %d problems, want an ErrorList of %d", err, len(list), len(tt.want))
			}
			var se *SyntaxError
			if !errors.As(err, &se) || se.File != "x.yaml" {
				t.Fatalf("errors.As(*SyntaxError) = %+v", se)
			}
		})
	}
}

func TestSyntaxErrorFormat(t *testing.T) {
	for _, tt := range []struct {
		err  SyntaxError
		want string
	}{
		{SyntaxError{"jobs/x.yaml", 12, "run.timeout", `invalid duration "6o s"`}, `jobs/x.yaml:12: run.timeout: invalid duration "6o s"`},
		{SyntaxError{"jobs/x.yaml", 3, "", `unknown field "iters"`}, `jobs/x.yaml:3: unknown field "iters"`},
		{SyntaxError{"jobs/x.yaml", 0, "", "empty job file"}, `jobs/x.yaml: empty job file`},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestCISections(t *testing.T) {
	dir := t.TempDir()
	src := `repo: .
build: {command: make}
run: {command: ./b}
metrics:
  - {name: t_ms, regex: 't: (?P<value>[0-9.]+)', better: lower}
variants:
  slow: {env: {CFLAGS: -DSLOW}}
ignore: [docs/**, "*.md", /top.txt]
gate:
  threshold: 3%
  metrics: {t_ms: 2, maxrss: }
  alpha: 0.01
  max_runs: 40
  max_time: 5m
  alignment: fail
  inconclusive: pass
  triage: false
qualify:
  slowdown: {variant: slow}
`
	jobs, err := Parse(filepath.Join(dir, "j.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	j := jobs[0]
	g := j.Gate
	if g.ThresholdPct != 3 || len(g.Metrics) != 2 || g.Metrics[0] != (GateMetric{"t_ms", 2}) || g.Metrics[1] != (GateMetric{"time.maximum_resident_set_size", 0}) ||
		g.Alpha != 0.01 || g.MaxRuns != 40 || g.MaxTime != 5*time.Minute || g.Alignment != PolicyFail || g.Inconclusive != PolicyPass || !g.NoTriage {
		t.Errorf("gate = %+v", g)
	}
	if j.Qualify.Slowdown == nil || j.Qualify.Slowdown.Variant != "slow" {
		t.Errorf("qualify = %+v", j.Qualify)
	}
	for path, want := range map[string]bool{"docs/a/b.c": true, "README.md": true, "x/y/z.md": true, "top.txt": true, "x/top.txt": false, "main.c": false, "docsx/a": false} {
		if got := j.Ignored(path); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", path, got, want)
		}
	}
	plainKey := func(s string) string {
		js, err := Parse(filepath.Join(dir, "j.yaml"), []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return js[0].Key()
	}
	if plainKey(src) != plainKey(strings.SplitN(src, "ignore:", 2)[0]) {
		t.Error("the CI sections changed the job key")
	}
	for _, bad := range []struct{ yaml, want string }{
		{"gate: {threshold: -1}", "gate.threshold"},
		{"gate: {threshold: lots}", "gate.threshold: expected a number"},
		{"gate: {metrics: {nosuch: 3}}", `gate.metrics.nosuch: the job reads no metric "nosuch"`},
		{"gate: {alignment: maybe}", "gate.alignment: want pass, fail"},
		{"gate: {alpha: 0.7}", "gate.alpha"},
		{"gate: {max_runs: 2}", "gate.max_runs"},
		{"gate: {triage: yes please}", "gate.triage"},
		{"qualify: {slowdown: {variant: fast}}", `qualify.slowdown.variant: the job declares no variant "fast"`},
		{"qualify: {slowdown: {}}", "qualify.slowdown: want exactly one"},
		{"ignore: ['[']", "ignore[0]: invalid glob"},
		{"ignore: docs", "ignore: expected a list"},
	} {
		s := strings.SplitN(src, "ignore:", 2)[0] + bad.yaml + "\n"
		_, err := Parse(filepath.Join(dir, "j.yaml"), []byte(s))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want %q", bad.yaml, err, bad.want)
		}
	}
}
