package job

import (
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/suite"
)

const suiteJob = `repo: ../stress-ng
build:
  command: make -j2
suite: stress-ng
runs: 5
`

func TestSuiteJob(t *testing.T) {
	j := mustParse(t, "x.yaml", suiteJob)[0]
	u, err := suite.Expand("stress-ng", nil)
	if err != nil {
		t.Fatal(err)
	}
	if j.Suite == nil || j.Suite.Suite != "stress-ng" || j.Run.Command != u.Command || j.Run.Timeout != DefaultRunTimeout || j.Build.Command != "make -j2" {
		t.Fatalf("job %+v: want the suite's command, the job's build and run defaults", j)
	}
	if len(j.Metrics) != 2 || j.Metrics[0].Name != "stress-ng.mutex.ops_per_sec" || !j.Metrics[1].Family() {
		t.Fatalf("metrics %+v: want the key metric, then the family", j.Metrics)
	}
	if ref, err := j.ResolveMetric(""); err != nil || ref.Name != "stress-ng.mutex.ops_per_sec" || ref.Better != metric.HigherIsBetter {
		t.Errorf("default metric: %+v, %v; want stress-ng.mutex.ops_per_sec, higher is better", ref, err)
	}
	if ref, err := j.ResolveMetric("stress-ng.mutex.nanosecs_per_mutex"); err != nil || !ref.Family {
		t.Errorf("a member of the family: %+v, %v", ref, err)
	}
	if _, err := j.ResolveMetric("fio.read_iops"); err == nil || !strings.Contains(err.Error(), "it produces stress-ng.mutex.ops_per_sec, stress-ng.*") {
		t.Errorf("another suite's metric: %v; want an error listing what the job produces", err)
	}
	// Run settings stay the job's.
	j = mustParse(t, "x.yaml", suiteJob+"run: {timeout: 30s, cpu: none, env: {A: b}}\n")[0]
	if j.Run.Timeout.String() != "30s" || j.Run.CPU != "none" || j.Run.Env["A"] != "b" || j.Run.Command == "" {
		t.Errorf("run settings beside a suite: %+v", j.Run)
	}
}

func TestSuiteOptionsAndParams(t *testing.T) {
	jobs := mustParse(t, "x.yaml", `repo: .
build: {command: "true"}
suite:
  name: stress-ng
  stressor: ${s}
  ops: 2000
params:
  s: [mutex, futex]
`)
	if len(jobs) != 2 || jobs[0].Name != "x/s=mutex" || jobs[1].Name != "x/s=futex" {
		t.Fatalf("jobs %v", jobs)
	}
	for i, st := range []string{"mutex", "futex"} {
		j := jobs[i]
		if j.Metrics[0].Name != "stress-ng."+st+".ops_per_sec" || !strings.Contains(j.Run.Command, "--"+st+"-ops 2000") {
			t.Errorf("%s: metrics %+v, command\n%s", j.Name, j.Metrics, j.Run.Command)
		}
		if j.Suite.Options["stressor"] != st || j.Suite.Options["instances"] != "1" {
			t.Errorf("%s: options %v", j.Name, j.Suite.Options)
		}
	}
	if jobs[0].Key() == jobs[1].Key() {
		t.Error("two stressors share a job key")
	}
}

func TestSuiteWithOwnMetrics(t *testing.T) {
	j := mustParse(t, "x.yaml", `repo: .
build: {command: "true"}
suite: {name: fio, rw: read}
metrics:
  - name: fio.read_iops
    format: fio
  - builtin: wall
`)[0]
	var names []string
	for _, m := range j.Metrics {
		names = append(names, m.Name)
	}
	// The job's own first; the suite's read_iops is the job's now.
	if strings.Join(names, ",") != "fio.read_iops,,fio.read_bw_MBps," {
		t.Errorf("metrics %q", names)
	}
	if fam := j.Metrics[3]; fam.Format != "fio" || strings.Join(fam.Exclude, ",") != "fio.read_iops,fio.read_bw_MBps" {
		t.Errorf("family %+v: want it to leave out the named fio metrics", fam)
	}
	if ref, _ := j.ResolveMetric(""); ref.Name != "fio.read_iops" {
		t.Errorf("default metric %q, want the job's own first metric", ref.Name)
	}
}

func TestFormatMetric(t *testing.T) {
	j := mustParse(t, "x.yaml", `repo: .
build: {command: make}
run: {command: "hyperfine --export-json out.json ./x"}
metrics:
  - name: hyperfine.x.mean
    format: hyperfine
    from: out.json
  - format: hyperfine
    from: out.json
`)[0]
	m := j.Metrics
	if len(m) != 2 || m[0].Kind != metric.KindFormat || m[0].Format != "hyperfine" || m[0].From != "out.json" || strings.Join(m[1].Exclude, ",") != "hyperfine.x.mean" {
		t.Fatalf("metrics %+v", m)
	}
	// The direction of a named format metric is the format's, read from
	// the first runs, unless the job says.
	if ref, err := j.ResolveMetric(""); err != nil || ref.Better != 0 || ref.Family {
		t.Errorf("ResolveMetric: %+v, %v; want hyperfine.x.mean with its direction unknown before a run", ref, err)
	}
}

func TestSuiteErrors(t *testing.T) {
	base := "repo: .\nbuild: {command: make}\n"
	for _, tc := range []struct {
		desc, src string
		want      []string
	}{
		{"run.command beside a suite", base + "suite: hackbench\nrun:\n  command: ./bench\n",
			[]string{"x.yaml:5: run.command: the suite supplies the run command: leave it out (run.timeout, run.env and run.cpu stay the job's)"}},
		{"unknown suite", base + "suite: stressng\n",
			[]string{`x.yaml:3: suite.name: unknown suite "stressng" (did you mean "stress-ng"?); perfbot has ` + strings.Join(suite.Names(), ", ")}},
		{"no name", base + "suite: {stressor: mutex}\n",
			[]string{"x.yaml:3: suite.name: missing (the suite to run: " + strings.Join(suite.Names(), ", ") + ")"}},
		{"a list", base + "suite: [stress-ng]\n",
			[]string{"x.yaml:3: suite: expected a suite name or a mapping {name: NAME, option: value, ...}, got a list"}},
		{"unknown option", base + "suite:\n  name: hackbench\n  group: 4\n",
			[]string{`x.yaml:5: suite.group: suite hackbench has no option "group" (did you mean "groups"?); it has groups, fds, loops, datasize, mode, ipc, iterations, program, args`}},
		{"bad value", base + "suite:\n  name: hackbench\n  mode: thread\n",
			[]string{`x.yaml:5: suite.mode: suite hackbench: mode: want one of process, threads, got "thread"`}},
		{"a value that is not a scalar", base + "suite:\n  name: hackbench\n  loops: [1, 2]\n",
			[]string{"x.yaml:5: suite.loops: expected a value, got a list"}},
		{"not a param", base + "suite:\n  name: stress-ng\n  stressor: ${HOME}\n",
			[]string{"x.yaml:5: suite.stressor: ${HOME} is not a param (suite options take params, as they are; nothing else is expanded)"}},
		{"a param's bad value", base + "suite:\n  name: stress-ng\n  stressor: ${s}\nparams:\n  s: [mutex, \"Bad One\"]\n",
			[]string{`x.yaml:5: suite.stressor: suite stress-ng: stressor: want a stressor name, got "Bad One" (in x/s=Bad One)`}},
		{"the suite's combination", base + "suite: {name: sysbench, test: memory, cpu_max_prime: 5}\n",
			[]string{"x.yaml:3: suite.cpu_max_prime: suite sysbench: cpu_max_prime: is an option of sysbench's cpu test, and this job runs its memory test"}},
		{"format metric problems", base + "suite: fio\nmetrics:\n  - format: fio\n    better: higher\n  - format: iozone\n", []string{
			"x.yaml:6: metrics[0].better: a fio family takes each metric's direction from the format; set better on a named metric",
			"x.yaml:7: metrics[1].format: unknown format \"iozone\" (want one of " + strings.Join(metric.FormatNames(), ", ") + ")",
		}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.src))
			if err == nil || err.Error() != strings.Join(tc.want, "\n") {
				t.Errorf("Parse:\n%v\nwant:\n%s", err, strings.Join(tc.want, "\n"))
			}
		})
	}
}
