package metric

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
)

// Rust criterion. criterion writes its results to files, one folder per
// benchmark: target/criterion/<id>/new/benchmark.json (its id) and
// new/estimates.json (the estimates, in ns). The criterion suite's run
// command prints them to stdout as one JSON line per benchmark,
//
//	{"benchmark": <benchmark.json>, "estimates": <estimates.json>}
//
// so the run's log keeps them; readCriterion reads those lines. lkp-tests
// has no parser for criterion; the names follow its pattern:
// criterion.<id>.mean, .median, .slope (when criterion fitted one),
// .std_dev and .median_abs_dev, the point estimates in ns, and with a
// declared throughput .bytes_per_second or .elements_per_second (from the
// mean). The id is criterion's full_id normalized as lkp normalizes names
// ("fib 20" is fib_20, "group/fib/20" stays).

type criterionEstimate struct {
	Point float64 `json:"point_estimate"`
}

func readCriterion(data []byte) ([]Value, error) {
	var vals []Value
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var rec struct {
			Benchmark *struct {
				FullID     string             `json:"full_id"`
				Throughput map[string]float64 `json:"throughput"`
			} `json:"benchmark"`
			Estimates map[string]*criterionEstimate `json:"estimates"`
		}
		if err := json.Unmarshal(line, &rec); err != nil || rec.Benchmark == nil || rec.Estimates == nil {
			continue
		}
		id := LKPName(rec.Benchmark.FullID)
		if id == "" {
			return nil, fmt.Errorf("a benchmark without a full_id")
		}
		for _, f := range []string{"mean", "median", "slope", "std_dev", "median_abs_dev"} {
			if e := rec.Estimates[f]; e != nil {
				vals = append(vals, Value{Name: id + "." + f, Unit: "ns", Better: LowerIsBetter, Value: e.Point})
			}
		}
		mean := rec.Estimates["mean"]
		for _, t := range [][2]string{{"Bytes", "bytes_per_second"}, {"Elements", "elements_per_second"}} {
			if n, ok := rec.Benchmark.Throughput[t[0]]; ok && mean != nil && mean.Point > 0 {
				vals = append(vals, Value{Name: id + "." + t[1], Unit: "1/s", Better: HigherIsBetter, Value: n * 1e9 / mean.Point})
			}
		}
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf(`no {"benchmark": ..., "estimates": ...} lines: %w`, ErrMissing)
	}
	return vals, nil
}
