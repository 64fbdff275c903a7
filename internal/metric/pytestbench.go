package metric

import (
	"encoding/json"
	"fmt"
)

// pytest-benchmark --benchmark-json. lkp-tests has no parser for it;
// readPytestBenchmark names in lkp's pattern, per test:
// pytest-benchmark.<test>.mean, .median, .min, .max and .stddev in seconds
// and .ops (calls per second, higher-is-better). The test is its name
// ("test_fib[10]" is test_fib_10), or its full name ("test_x.py::test_fib
// [10]", test_x.py_test_fib_10) when two tests of the run share a name.

func readPytestBenchmark(data []byte) ([]Value, error) {
	var doc struct {
		Benchmarks []struct {
			Name     string         `json:"name"`
			Fullname string         `json:"fullname"`
			Stats    map[string]any `json:"stats"`
		} `json:"benchmarks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not pytest-benchmark's JSON: %v: %w", err, ErrMissing)
	}
	if len(doc.Benchmarks) == 0 {
		return nil, fmt.Errorf("no benchmarks in pytest-benchmark's JSON: %w", ErrMissing)
	}
	names := map[string]int{}
	for _, b := range doc.Benchmarks {
		names[b.Name]++
	}
	var vals []Value
	for _, b := range doc.Benchmarks {
		id := b.Name
		if names[id] > 1 {
			id = b.Fullname
		}
		id = LKPName(id)
		for _, f := range []string{"mean", "median", "min", "max", "stddev"} {
			if v, ok := b.Stats[f].(float64); ok {
				vals = append(vals, Value{Name: id + "." + f, Unit: "s", Better: LowerIsBetter, Value: v})
			}
		}
		if v, ok := b.Stats["ops"].(float64); ok {
			vals = append(vals, Value{Name: id + ".ops", Unit: "ops/s", Better: HigherIsBetter, Value: v})
		}
	}
	return vals, nil
}
