package measure

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestPerfInstructions: counter perf counts instructions:u beside every
// timed run where this machine's perf counts them; where it cannot (no
// hardware counters: most VMs), the measurement stops before any run with
// an error that says why and names callgrind, and auto picks callgrind.
func TestPerfInstructions(t *testing.T) {
	testutil.NeedTool(t, "perf")
	opt, targets := setup(t, "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; echo work_ms: VERSION\n")
	jobs, err := job.Parse("/x/job.yaml", []byte(`repo: .
build: {command: "true"}
run: {command: "sh bench.sh", timeout: 10s}
runs: 3
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
  - {builtin: instructions, counter: perf}
`))
	if err != nil {
		t.Fatal(err)
	}
	j := jobs[0]
	opt.WholeRounds = true
	out, err := Measure(context.Background(), j, targets, opt)
	if _, perr := ResolveCounter(metric.CounterPerf); perr != nil {
		if err == nil || !errors.Is(err, ErrNoCounter) || !strings.Contains(err.Error(), "counter perf") || !strings.Contains(err.Error(), "use counter: callgrind") {
			t.Fatalf("no perf counter here (%v), and Measure says %v; want the reason and callgrind named", perr, err)
		}
		if c, err := ResolveCounter(metric.CounterAuto); err == nil && c != metric.CounterCallgrind {
			t.Errorf("auto without perf counters is %s, want callgrind", c)
		}
		t.Logf("this machine: %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range out.Targets {
		runs, err := opt.Store.Runs(context.Background(), j.Key(), tg.Target.Commit.Hash, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			n := 0.0
			for _, v := range r.Values {
				if v.Name == metric.Instructions {
					n = v.Value
				}
				if strings.HasPrefix(v.Name, "perf-stat.") {
					t.Errorf("run %d stored %s: the count is the job's metric, not a monitor's", r.Index, v.Name)
				}
			}
			// The loop alone runs thousands of instructions.
			if n < 10000 {
				t.Errorf("run %d of %s: instructions %v", r.Index, tg.Target, n)
			}
		}
	}
}
