package job

import (
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/metric"
)

// TestInstructionsMetric: `builtin: instructions` is a metric of the job's
// own named "instructions", counter auto unless given; a bad counter, a
// counter on another metric and a unit are errors naming the line; the
// counter is part of the job key.
func TestInstructionsMetric(t *testing.T) {
	parse := func(metrics string) ([]*Job, error) {
		return Parse("job.yaml", []byte("name: t\nrepo: .\nbuild: {command: \"true\"}\nrun: {command: \"true\"}\nmetrics:\n"+metrics+
			"gate: {metrics: {instructions: 1}}\n"))
	}
	js, err := parse("  - {builtin: instructions}\n")
	if err != nil {
		t.Fatal(err)
	}
	s := js[0].Metrics[0]
	if s.Name != metric.Instructions || s.Counter != metric.CounterAuto || !s.IsInstructions() {
		t.Errorf("spec %+v: want name instructions, counter auto", s)
	}
	if metric.IsBuiltin(s.Name) {
		t.Error("instructions counted as a builtin resource figure: it would never gate")
	}
	keys := map[string]bool{js[0].Key(): true}
	for _, c := range []string{"perf", "callgrind"} {
		js, err := parse("  - {builtin: instructions, counter: " + c + "}\n")
		if err != nil {
			t.Fatal(err)
		}
		if js[0].Metrics[0].Counter != metric.Counter(c) {
			t.Errorf("counter %s read as %q", c, js[0].Metrics[0].Counter)
		}
		keys[js[0].Key()] = true
	}
	if len(keys) != 3 {
		t.Errorf("the counters share job keys: %v", keys)
	}
	for _, tc := range []struct{ metrics, want string }{
		{"  - {builtin: instructions, counter: bogus}\n", `job.yaml:6: metrics[0].counter: unknown counter "bogus" (want auto, perf, callgrind)`},
		{"  - {builtin: instructions}\n  - {builtin: wall, counter: perf}\n", "job.yaml:7: metrics[1].counter: only the instructions builtin has a counter"},
		{"  - {builtin: instructions, unit: Ir}\n", "job.yaml:6: metrics[0].unit: instructions are counted in instructions"},
		{"  - {builtin: instructions, better: higher}\n", "metrics[0].better: fewer instructions are better"},
	} {
		_, err := parse(tc.metrics)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want %q", tc.metrics, err, tc.want)
		}
	}
}
