package job

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that any input gives jobs or an ErrorList of positioned
// problems, never a panic.
func FuzzParse(f *testing.F) {
	f.Add(minimal)
	f.Add(full)
	f.Add("a: &x [*x]\n")
	f.Add("params: {a: &v [1, 2], b: *v}\n")
	f.Add(strings.Replace(minimal, "runs: 6", "runs: 0x10\nwarmup: 1_000", 1))
	f.Add(suiteJob)
	f.Add("repo: .\nbuild: {command: make}\nsuite: {name: stress-ng, stressor: ${s}}\nparams: {s: [mutex, cpu]}\nmetrics: [{format: stress-ng, name: stress-ng.cpu.ops}]\n")
	f.Fuzz(func(t *testing.T, src string) {
		jobs, err := Parse("f.yaml", []byte(src))
		if err != nil {
			var list ErrorList
			if jobs != nil || !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Parse = %d jobs, %T %v", len(jobs), err, err)
			}
			for _, e := range list {
				if e.File != "f.yaml" || e.Msg == "" {
					t.Fatalf("bad problem %+v", e)
				}
			}
			return
		}
		if len(jobs) == 0 || len(jobs) > MaxMatrix {
			t.Fatalf("Parse gave %d jobs", len(jobs))
		}
		for _, j := range jobs {
			if j.Runs < MinRuns || j.Build.Command == "" || j.Run.Command == "" || len(j.Metrics) == 0 || len(j.Key()) != 16 {
				t.Fatalf("invalid job %+v", j)
			}
			for _, m := range j.Metrics {
				if err := m.Validate(); err != nil {
					t.Fatalf("job has an invalid metric: %v", err)
				}
			}
		}
	})
}
