package metric

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The files under testdata/formats are real output of the real programs
// (Debian 12's packages: stress-ng 0.15.06, rt-tests 2.4 hackbench, fio
// 3.33, sysbench 1.0.20, redis-benchmark 7.0.15, libbenchmark 1.7.1,
// hyperfine 1.15.0, pytest-benchmark 3.2.2, criterion 0.3.6 built offline
// from Debian's librust-criterion-dev), captured once; internal/suite runs
// the programs themselves. The expected figures below are read off the
// files by hand.

func readFormat(t *testing.T, format, file string) map[string]Value {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "formats", file))
	if err != nil {
		t.Fatal(err)
	}
	s := Spec{Kind: KindFormat, Format: format}
	vals, err := s.Extract(Output{Stdout: data})
	if err != nil {
		t.Fatalf("%s on %s: %v", format, file, err)
	}
	got := map[string]Value{}
	for _, v := range vals {
		if _, dup := got[v.Name]; dup {
			t.Errorf("%s on %s: %s given twice", format, file, v.Name)
		}
		if v.Better != HigherIsBetter && v.Better != LowerIsBetter || math.IsNaN(v.Value) {
			t.Errorf("%s on %s: bad value %+v", format, file, v)
		}
		got[v.Name] = v
	}
	return got
}

// want is a metric a format must read, its value (to 1e-9 relative) and
// direction.
type want struct {
	name   string
	value  float64
	better Better
}

func TestFormatsOnRealOutput(t *testing.T) {
	H, L := HigherIsBetter, LowerIsBetter
	for _, tc := range []struct {
		format, file string
		count        int // how many metrics in all
		want         []want
		absent       []string
	}{
		{"stress-ng", "stress-ng.yaml", 3, []want{
			{"stress-ng.mutex.ops", 20001, H}, {"stress-ng.mutex.ops_per_sec", 226365.838552, H},
			{"stress-ng.mutex.nanosecs_per_mutex", 4231.24138, L}}, nil},
		{"stress-ng", "stress-ng-brief.log", 3, []want{
			{"stress-ng.mutex.ops", 20001, H}, {"stress-ng.mutex.ops_per_sec", 226365.84, H},
			{"stress-ng.mutex.nanosecs_per_mutex", 4231.24, L}}, nil},
		{"stress-ng", "stress-ng-metrics.log", 5, []want{
			{"stress-ng.mutex.ops_per_sec", 229853.21, H}, {"stress-ng.cpu.ops", 200, H},
			{"stress-ng.cpu.ops_per_sec", 1940.11, H}}, nil},
		// 20 tasks * 200 messages * 100 bytes >> 10 = 390 KB in 0.015 s.
		{"hackbench", "hackbench.txt", 1, []want{{"hackbench.throughput", 390 / 0.015, H}}, []string{"hackbench.throughput_avg"}},
		// 976 KB in 0.015, 0.011 and 0.012 s.
		{"hackbench", "hackbench-3.txt", 4, []want{
			{"hackbench.throughput", 976 / 0.011, H}, {"hackbench.throughput_best", 976 / 0.011, H},
			{"hackbench.throughput_avg", 976 / (0.038 / 3), H}, {"hackbench.throughput_worst", 976 / 0.015, H}}, nil},
		{"fio", "fio-randread.json", 8, []want{
			{"fio.read_bw_MBps", 78769.0 / 1024, H}, {"fio.read_iops", 19692.307692, H},
			{"fio.read_clat_mean_ns", 50057.643555, L}, {"fio.read_clat_99%_ns", 68096, L}, {"fio.workload", 1024, H}},
			[]string{"fio.write_bw_MBps", "fio.write_iops"}},
		// Two jobs: bandwidths summed (64533+69142 KiB/s), latencies averaged.
		{"fio", "fio-randrw-2jobs.json", 15, []want{
			{"fio.read_bw_MBps", (64533.0 + 69142) / 1024, H}, {"fio.write_bw_MBps", (72000.0 + 77142) / 1024, H},
			{"fio.workload", 1024, H}}, nil},
		{"sysbench-cpu", "sysbench-cpu.txt", 10, []want{
			{"sysbench-cpu.throughput_events/s", 53405.96, H}, {"sysbench-cpu.workload", 2000, H},
			{"sysbench-cpu.latency_ms.95th", 0.02, L}, {"sysbench-cpu.runtime/thread.avg", 0.0363, L}}, nil},
		{"sysbench-memory", "sysbench-memory.txt", 11, []want{
			{"sysbench-memory.throughput_MB/s", 13560.76, H}, {"sysbench-memory.throughput_ops/s", 13886216.76, H},
			{"sysbench-memory.workload", 65536, H}, {"sysbench-memory.events/thread.avg", 32768, H}}, nil},
		{"sysbench-threads", "sysbench-threads.txt", 9, []want{
			{"sysbench-threads.workload", 500, H}, {"sysbench-threads.latency_ms.avg", 1.44, L},
			{"sysbench-threads.events/thread.stddev", 27, L}}, []string{"sysbench-threads.throughput_events/s"}},
		{"sysbench-mutex", "sysbench-mutex.txt", 9, []want{
			{"sysbench-mutex.workload", 2, H}, {"sysbench-mutex.latency_ms.avg", 32.13, L},
			{"sysbench-mutex.runtime/thread.stddev", 0.01, L}}, nil},
		{"redis-benchmark", "redis.csv", 56, []want{
			{"redis.set_total_throughput_rps", 100000, H}, {"redis.get_total_throughput_rps", 104166.66, H},
			{"redis.set_latency_95%_ms", 0.087, L}, {"redis.get_latency_99%_ms", 0.095, L},
			{"redis.PING_INLINE", 106382.98, H}, {"redis.LPUSH_LRANGE", 98039.22, H}, {"redis.LRANGE_100", 67567.57, H},
			{"redis.MSET", 89285.71, H}, {"redis.MSET_latency_max_ms", 4.031, L}}, nil},
		{"gbench", "gbench.json", 9, []want{
			{"gbench.BM_memcpy/64.real_time", 2.9292108501882220, L}, {"gbench.BM_memcpy/64.bytes_per_second", 2.3244548580572227e+10, H},
			{"gbench.BM_memcpy/1024.cpu_time", 6.3489588306818677, L}, {"gbench.BM_empty.foo", 3, L}}, nil},
		{"gbench", "gbench-aggregates.json", 12, []want{
			{"gbench.BM_empty_median.cpu_time", 0.44926891029278815, L}, {"gbench.BM_empty_cv.real_time", 0.004276556023090476, L}}, nil},
		{"hyperfine", "hyperfine.json", 14, []want{
			{"hyperfine.short.mean", 0.0108187551, L}, {"hyperfine.short.median", 0.0107704471, L},
			{"hyperfine.sleep_0.02.max", 0.024421657100000004, L}, {"hyperfine.sleep_0.02.system", 0.00022396666666666667, L}}, nil},
		{"pytest-benchmark", "pytest-benchmark.json", 12, []want{
			{"pytest-benchmark.test_fib_10.min", 4.075999640917871e-06, L}, {"pytest-benchmark.test_fib_5.ops", 1.3779002077634616e+06, H}}, nil},
		{"criterion", "criterion.jsonl", 10, []want{
			{"criterion.fib_15.mean", 1152.0682912752197, L}, {"criterion.fib_15.slope", 1146.2044849853962, L},
			{"criterion.grp/fib10.std_dev", -1, L}}, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := readFormat(t, tc.format, tc.file)
			if len(got) != tc.count {
				var names []string
				for n := range got {
					names = append(names, n)
				}
				slices.Sort(names)
				t.Errorf("%d metrics, want %d: %s", len(got), tc.count, strings.Join(names, " "))
			}
			for _, w := range tc.want {
				v, ok := got[w.name]
				switch {
				case !ok:
					t.Errorf("no %s", w.name)
				case v.Better != w.better:
					t.Errorf("%s: better %v, want %v", w.name, v.Better, w.better)
				case w.value >= 0 && math.Abs(v.Value-w.value) > 1e-9*math.Abs(w.value):
					t.Errorf("%s = %v, want %v", w.name, v.Value, w.value)
				}
			}
			for _, a := range tc.absent {
				if _, ok := got[a]; ok {
					t.Errorf("%s given; want it left out", a)
				}
			}
		})
	}
}

func TestFormatNamedAndExcluded(t *testing.T) {
	data, err := os.ReadFile("testdata/formats/stress-ng.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := Output{Stdout: data}
	named := Spec{Name: "stress-ng.mutex.ops_per_sec", Kind: KindFormat, Format: "stress-ng"}
	vals, err := named.Extract(out)
	if err != nil || len(vals) != 1 || vals[0].Name != named.Name || vals[0].Better != HigherIsBetter {
		t.Fatalf("named: %+v, %v; want the one metric, higher-is-better", vals, err)
	}
	named.Better = LowerIsBetter
	if vals, _ := named.Extract(out); vals[0].Better != LowerIsBetter {
		t.Errorf("better: lower on a named format metric did not override: %+v", vals)
	}
	family := Spec{Kind: KindFormat, Format: "stress-ng", Exclude: []string{"stress-ng.mutex.ops_per_sec"}}
	vals, err = family.Extract(out)
	if err != nil || len(vals) != 2 || vals[0].Name != "stress-ng.mutex.ops" || vals[1].Name != "stress-ng.mutex.nanosecs_per_mutex" {
		t.Fatalf("family less the named metric: %+v, %v", vals, err)
	}
	missing := Spec{Name: "stress-ng.futex.ops_per_sec", Kind: KindFormat, Format: "stress-ng"}
	_, err = missing.Extract(out)
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "it has stress-ng.mutex.ops, stress-ng.mutex.ops_per_sec") {
		t.Errorf("a named metric the output lacks: %v; want ErrMissing listing what it has", err)
	}
}

func TestFormatErrors(t *testing.T) {
	for _, tc := range []struct {
		format, out, err string
		missing          bool
	}{
		{"stress-ng", "", "no stress-ng --yaml metrics", true},
		{"stress-ng", "metrics:\n    - stressor: mutex\n      bogo-ops: 0\n      bogo-ops-per-second-real-time: 0\n", "did no bogo ops", false},
		{"stress-ng", "stress-ng: info:  [1] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s\n" +
			"stress-ng: info:  [1]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)\n" +
			"stress-ng: info:  [1] splice                0      0.00      0.00      0.00         0.00         0.00\n", "splice did no bogo ops", false},
		{"hackbench", "Time: 0.1\n", "no \"Running in", true},
		{"hackbench", "Running in process mode with 1 groups using 2 file descriptors each (== 2 tasks)\nEach sender will pass 1 messages of 100 bytes\nTime: 0.000\n", "too short", false},
		{"fio", "fio: no JSON here", "no JSON document", true},
		{"fio", `{"jobs": [{"jobname": "x", "error": 5}]}`, "failed with error 5", false},
		{"sysbench-cpu", "sysbench 1.0.20\nFATAL: unknown option\n", "total number of events", true},
		{"redis-benchmark", "", "no test results", true},
		{"redis-benchmark", "\"SET\"\n", "has one field", false},
		{"gbench", `{"benchmarks": [{"name": "BM_x", "run_type": "iteration", "error_occurred": true, "error_message": "boom", "time_unit": "ns"}]}`, "BM_x failed: boom", false},
		{"gbench", "not json", "not Google Benchmark's JSON", true},
		{"hyperfine", `{"results": []}`, "no results", true},
		{"pytest-benchmark", `{"benchmarks": []}`, "no benchmarks", true},
		{"criterion", "Benchmarking fib\n", "no {\"benchmark\"", true},
	} {
		s := Spec{Kind: KindFormat, Format: tc.format}
		_, err := s.Extract(Output{Stdout: []byte(tc.out)})
		if err == nil || !strings.Contains(err.Error(), tc.err) || errors.Is(err, ErrMissing) != tc.missing {
			t.Errorf("%s on %q: %v; want an error with %q (missing: %v)", tc.format, tc.out, err, tc.err, tc.missing)
		}
	}
}

func TestFormatValidate(t *testing.T) {
	for _, tc := range []struct {
		spec       Spec
		field, msg string
	}{
		{Spec{Kind: KindFormat, Format: "fio"}, "", ""},
		{Spec{Kind: KindFormat, Format: "fio", Name: "fio.read_iops", Better: LowerIsBetter}, "", ""},
		{Spec{Kind: KindFormat}, "format", "missing format"},
		{Spec{Kind: KindFormat, Format: "iozone"}, "format", `unknown format "iozone"`},
		{Spec{Kind: KindFormat, Format: "redis-benchmark", Name: "redis-benchmark.SET"}, "name", "named redis.<...>"},
		{Spec{Kind: KindFormat, Format: "fio", Better: HigherIsBetter}, "better", "set better on a named metric"},
		{Spec{Kind: KindFormat, Format: "fio", Unit: "MB/s"}, "unit", "units the format gives"},
		{Spec{Kind: KindFormat, Format: "fio", Pattern: "x"}, "regex", "regex given for a format metric"},
		{Spec{Kind: KindJSON, Name: "x", Path: ".x", Format: "fio"}, "format", "format given for a json metric"},
		{Spec{Kind: KindJSON, Name: "x", Path: ".x", Exclude: []string{"y"}}, "name", "only a format family"},
	} {
		err := tc.spec.Validate()
		var se *SpecError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%+v: %v, want valid", tc.spec, err)
		case tc.field != "" && (!errors.As(err, &se) || se.Field != tc.field || !strings.Contains(se.Msg, tc.msg)):
			t.Errorf("%+v: %v, want field %s with %q", tc.spec, err, tc.field, tc.msg)
		}
	}
}

func TestLKPName(t *testing.T) {
	for in, want := range map[string]string{
		"nanosecs per mutex":       "nanosecs_per_mutex",
		" test_fib[10] ":           "test_fib_10",
		"test_x.py::test_fib[10]":  "test_x.py_test_fib_10",
		"BM_x/threads:2":           "BM_x/threads_2",
		"write128 MB/sec":          "write128_MB/sec",
		`a__b, "c" (d)`:            "a_b_c_d",
		"x.....y":                  "x.y",
		"% sendto calls succeeded": "%_sendto_calls_succeeded",
	} {
		if got := LKPName(in); got != want {
			t.Errorf("LKPName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExcludeNamed(t *testing.T) {
	specs := []Spec{
		{Kind: KindFormat, Format: "fio", Name: "fio.read_iops"},
		{Kind: KindFormat, Format: "fio"},
		{Kind: KindFormat, Format: "fio", Name: "fio.read_bw_MBps", From: "stdout"},
		{Kind: KindFormat, Format: "fio", Name: "fio.write_iops", From: "other.json"},
		{Kind: KindGoBench, Name: "go"},
		{Kind: KindRegex, Pattern: `(?P<name>\w+): (?P<value>\S+)`, Name: "re"},
		{Kind: KindJSON, Name: "fio.read_clat_mean_ns", Path: ".x"},
	}
	ExcludeNamed(specs)
	// Every single metric, whatever reads it: a run stores a name once.
	want := []string{"fio.read_iops", "fio.read_bw_MBps", "fio.write_iops", "fio.read_clat_mean_ns"}
	if got := specs[1].Exclude; !slices.Equal(got, want) {
		t.Errorf("fio family excludes %v, want %v", got, want)
	}
	for i, s := range specs {
		if i != 1 && s.Exclude != nil {
			t.Errorf("spec %d (not a format family) excludes %v", i, s.Exclude)
		}
	}
	for i, fam := range []bool{false, true, false, false, true, true, false} {
		if specs[i].Family() != fam {
			t.Errorf("spec %d: Family() = %v, want %v", i, !fam, fam)
		}
	}
}
