package metric

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
)

// sysbench (cpu, memory, threads, mutex). lkp-tests runs each test as its
// own program (sysbench-cpu, sysbench-memory, ...) with one parser
// (programs/sysbench/parse), whose names readSysbench gives:
// throughput_ops/s and throughput_MB/s (memory: "Total operations" and
// "transferred"), workload (total number of events), latency_ms.min, .avg,
// .max and .95th, events/thread.avg and .stddev, runtime/thread.avg and
// .stddev. lkp reads throughput_events/s from "events/s (eps):"; sysbench
// 1.0 prints the cpu test's rate as "events per second:", which is read
// under the same name. Several runs in one output are combined as lkp does:
// totals summed, minima and maxima kept, the rest averaged.

type sysbenchRule struct {
	re    *regexp.Regexp
	names []string // one per group
	how   byte     // 't' total, 'a' average, 'n' minimum, 'x' maximum
	units []string
	dirs  []Better
}

var sysbenchRules = []sysbenchRule{
	{regexp.MustCompile(`Total operations:\s+\d+\s+\(([0-9.]+)\s+.+\)`), []string{"throughput_ops/s"}, 't', []string{"ops/s"}, []Better{HigherIsBetter}},
	{regexp.MustCompile(`.+\s+transferred\s+\(([0-9.]+)\s+.+\)`), []string{"throughput_MB/s"}, 't', []string{"MiB/s"}, []Better{HigherIsBetter}},
	{regexp.MustCompile(`total number of events:\s+(\d+)`), []string{"workload"}, 't', []string{"events"}, []Better{HigherIsBetter}},
	{regexp.MustCompile(`events/s \(eps\):\s+([0-9.]+)`), []string{"throughput_events/s"}, 'a', []string{"events/s"}, []Better{HigherIsBetter}},
	{regexp.MustCompile(`events per second:\s+([0-9.]+)`), []string{"throughput_events/s"}, 'a', []string{"events/s"}, []Better{HigherIsBetter}},
	{regexp.MustCompile(`time elapsed:\s+([0-9.]+)`), []string{"throughput_time"}, 'a', []string{"s"}, []Better{LowerIsBetter}},
	{regexp.MustCompile(`min:\s+([0-9.]+)`), []string{"latency_ms.min"}, 'n', []string{"ms"}, []Better{LowerIsBetter}},
	{regexp.MustCompile(`avg:\s+([0-9.]+)`), []string{"latency_ms.avg"}, 'a', []string{"ms"}, []Better{LowerIsBetter}},
	{regexp.MustCompile(`max:\s+([0-9.]+)`), []string{"latency_ms.max"}, 'x', []string{"ms"}, []Better{LowerIsBetter}},
	{regexp.MustCompile(`95th percentile:\s+([0-9.]+)`), []string{"latency_ms.95th"}, 'a', []string{"ms"}, []Better{LowerIsBetter}},
	{regexp.MustCompile(`events\s+\(avg/stddev\):\s+([0-9.]+)/([0-9.]+)`), []string{"events/thread.avg", "events/thread.stddev"}, 'a',
		[]string{"events", "events"}, []Better{HigherIsBetter, LowerIsBetter}},
	{regexp.MustCompile(`execution time.+:\s+([0-9.]+)/([0-9.]+)`), []string{"runtime/thread.avg", "runtime/thread.stddev"}, 'a',
		[]string{"s", "s"}, []Better{LowerIsBetter, LowerIsBetter}},
}

func readSysbench(data []byte) ([]Value, error) {
	type acc struct {
		v   Value
		n   int
		how byte
	}
	got := map[string]*acc{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		for _, r := range sysbenchRules {
			m := r.re.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			for i, name := range r.names {
				f, err := parseNumber(m[i+1])
				if err != nil {
					return nil, fmt.Errorf("%s: %v", name, err)
				}
				a := got[name]
				if a == nil {
					a = &acc{v: Value{Name: name, Unit: r.units[i], Better: r.dirs[i], Value: f}, how: r.how}
					got[name] = a
					order = append(order, name)
					a.n = 1
					continue
				}
				switch r.how {
				case 'n':
					a.v.Value = min(a.v.Value, f)
				case 'x':
					a.v.Value = max(a.v.Value, f)
				default:
					a.v.Value += f
				}
				a.n++
			}
			break // the first rule that matches a line reads it, as in lkp
		}
	}
	if got["workload"] == nil {
		return nil, fmt.Errorf("no \"total number of events:\" line: %w", ErrMissing)
	}
	vals := make([]Value, 0, len(order))
	for _, name := range order {
		a := got[name]
		if a.how == 'a' {
			a.v.Value /= float64(a.n)
		}
		vals = append(vals, a.v)
	}
	return vals, nil
}
