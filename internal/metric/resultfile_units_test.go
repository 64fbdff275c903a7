package metric

import (
	"strings"
	"testing"
)

// TestResultFileUnitPerMember: in an aggregates-only Google Benchmark
// file the _cv rows are ratios where _mean's are times: each keeps its own
// unit.
func TestResultFileUnitPerMember(t *testing.T) {
	data := []byte(`{"context": {"date": "x", "executable": "./b"}, "benchmarks": [
 {"name": "BM_x_mean", "run_name": "BM_x", "run_type": "aggregate", "aggregate_name": "mean", "aggregate_unit": "time", "iterations": 3, "real_time": 10.5, "cpu_time": 10.4, "time_unit": "ns"},
 {"name": "BM_x_cv", "run_name": "BM_x", "run_type": "aggregate", "aggregate_name": "cv", "aggregate_unit": "percentage", "iterations": 3, "real_time": 0.02, "cpu_time": 0.03, "time_unit": "ns"}
]}`)
	rf, err := ReadResultFile(data, "agg.json")
	if err != nil {
		t.Fatal(err)
	}
	units := map[string]string{}
	for _, r := range rf.Results {
		for _, v := range r.Values {
			units[string(r.Name)] = rf.Units[v.Unit].Unit
		}
	}
	var mean, cv string
	for name, u := range units {
		switch {
		case strings.Contains(name, "_cv"):
			cv = u
		default:
			mean = u
		}
	}
	if mean != "ns" || cv != "" {
		t.Errorf("units %v: want the mean in ns and the cv without a unit", units)
	}
}
