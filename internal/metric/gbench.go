package metric

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Google Benchmark --benchmark_format=json (or the file of
// --benchmark_out). lkp-tests has no parser for it; readGBench names in
// lkp's pattern: gbench.<benchmark>.real_time and .cpu_time (converted to
// ns from the benchmark's time_unit) and gbench.<benchmark>.<counter> for
// every counter (bytes_per_second, items_per_second and user counters;
// those ending in _per_second are higher-is-better, other user counters
// lower-is-better: name one in the job's metrics with better: to say
// otherwise). The benchmark name is normalized as lkp normalizes names
// ("BM_x/threads:2" is BM_x/threads_2). With --benchmark_repetitions each
// repetition is a value of the run (perfbot takes their median); the
// aggregates (_mean, _median, _stddev, _cv) are read only when the output
// has no iterations of that benchmark (--benchmark_report_aggregates_only).
// A benchmark that reports an error fails the run.

// gbenchFields are the keys of a benchmark entry that are not counters.
var gbenchFields = []string{"name", "family_index", "per_family_instance_index", "run_name", "run_type",
	"repetitions", "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
	"aggregate_name", "aggregate_unit", "error_occurred", "error_message", "label", "big_o", "rms",
	"cpu_coefficient", "real_coefficient", "complexity_n"}

var gbenchUnits = map[string]float64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}

func readGBench(data []byte) ([]Value, error) {
	var doc struct {
		Benchmarks []map[string]any `json:"benchmarks"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not Google Benchmark's JSON: %v: %w", err, ErrMissing)
	}
	if len(doc.Benchmarks) == 0 {
		return nil, fmt.Errorf("no benchmarks in Google Benchmark's JSON: %w", ErrMissing)
	}
	iterated := map[string]bool{}
	for _, b := range doc.Benchmarks {
		if b["run_type"] != "aggregate" {
			iterated[fmt.Sprint(b["run_name"])] = true
		}
	}
	var vals []Value
	for _, b := range doc.Benchmarks {
		name, _ := b["name"].(string)
		if b["error_occurred"] == true {
			return nil, fmt.Errorf("benchmark %s failed: %v", name, b["error_message"])
		}
		if b["run_type"] == "aggregate" && iterated[fmt.Sprint(b["run_name"])] {
			continue
		}
		id := LKPName(name)
		scale, ok := gbenchUnits[fmt.Sprint(b["time_unit"])]
		if !ok {
			return nil, fmt.Errorf("benchmark %s: unknown time_unit %v", name, b["time_unit"])
		}
		unit := "ns"
		if b["aggregate_unit"] == "percentage" {
			scale, unit = 1, "" // the _cv aggregate: a ratio of times
		}
		for _, f := range []string{"real_time", "cpu_time"} {
			if n, ok := b[f].(json.Number); ok {
				v, err := parseNumber(string(n))
				if err != nil {
					return nil, fmt.Errorf("benchmark %s: %s: %v", name, f, err)
				}
				vals = append(vals, Value{Name: id + "." + f, Unit: unit, Better: LowerIsBetter, Value: v * scale})
			}
		}
		var counters []string
		for k := range b {
			if _, isNum := b[k].(json.Number); isNum && !slices.Contains(gbenchFields, k) {
				counters = append(counters, k)
			}
		}
		slices.Sort(counters)
		for _, k := range counters {
			v, err := parseNumber(string(b[k].(json.Number)))
			if err != nil {
				return nil, fmt.Errorf("benchmark %s: %s: %v", name, k, err)
			}
			better := LowerIsBetter
			if strings.HasSuffix(k, "_per_second") {
				better = HigherIsBetter
			}
			vals = append(vals, Value{Name: id + "." + LKPName(k), Better: better, Value: v})
		}
	}
	return vals, nil
}
