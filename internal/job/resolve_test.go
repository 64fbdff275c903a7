package job

import (
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/metric"
)

// TestResolveMetric: one resolver for --metric (issue 12): own metrics by
// name, builtins by either name, members of families only under the
// family's prefix and a dot, and an error that lists what the job makes.
func TestResolveMetric(t *testing.T) {
	jobs, err := Parse("/x/job.yaml", []byte(`repo: .
build: {command: "true"}
run: {command: "./bench"}
metrics:
  - {name: text_ms, regex: 'text_ms: (?P<value>[0-9.]+)', better: lower}
  - {name: ops, regex: 'ops: (?P<value>[0-9.]+)', better: higher}
  - {name: go, gobench: true}
  - {name: lat, regex: '(?P<name>\w+) p99 (?P<value>[0-9.]+)', better: lower}
  - {name: elapsed, builtin: wall}
`))
	if err != nil {
		t.Fatal(err)
	}
	j := jobs[0]
	for _, tc := range []struct {
		name, want string
		better     metric.Better
		family     bool
		err        string
	}{
		{name: "", want: "text_ms", better: metric.LowerIsBetter},
		{name: "ops", want: "ops", better: metric.HigherIsBetter},
		{name: "wall", want: "time.elapsed_time", better: metric.LowerIsBetter},
		{name: "time.user_time", want: "time.user_time", better: metric.LowerIsBetter},
		{name: "go.Sort/n=10.sec/op", want: "go.Sort/n=10.sec/op", family: true},
		{name: "lat.get", want: "lat.get", family: true},
		{name: "elapsed", want: "elapsed", better: metric.LowerIsBetter}, // a named builtin keeps its name
		{name: "text", err: "does not produce it"},                       // a prefix of text_ms is not text_ms
		{name: "latency", err: "produces text_ms, ops, go.*, lat.*, elapsed"},
	} {
		ref, err := j.ResolveMetric(tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want it to say %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || ref.Name != tc.want || ref.Better != tc.better || ref.Family != tc.family {
			t.Errorf("%q: %+v, %v; want %s better %v family %v", tc.name, ref, err, tc.want, tc.better, tc.family)
		}
	}
}
