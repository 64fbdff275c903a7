package metric

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzFormats: every format either reads finite, named values with a
// direction or says why not, whatever the output. It is seeded with the
// real outputs under testdata/formats that are small (large seeds make the
// fuzzer crawl: it minimizes what it finds interesting) and small
// hand-made documents for the JSON formats whose real outputs are large.
func FuzzFormats(f *testing.F) {
	names := FormatNames()
	seed := func(format string, data []byte) {
		f.Add(uint8(slices.Index(names, format)), data)
	}
	for file, format := range map[string]string{
		"stress-ng.yaml": "stress-ng", "stress-ng-brief.log": "stress-ng", "stress-ng-metrics.log": "stress-ng",
		"hackbench-3.txt": "hackbench", "sysbench-cpu.txt": "sysbench-cpu", "sysbench-memory.txt": "sysbench-memory",
		"redis.csv": "redis-benchmark", "hyperfine.json": "hyperfine",
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "formats", file))
		if err != nil {
			f.Fatal(err)
		}
		seed(format, data)
	}
	seed("fio", []byte(`{"jobs":[{"jobname":"t","read":{"bw":1024,"iops":2,"total_ios":3,"clat_ns":{"mean":1,"stddev":1,"percentile":{"90.000000":5}}}}]}`))
	seed("gbench", []byte(`{"benchmarks":[{"name":"BM_x/8","run_name":"BM_x/8","run_type":"iteration","real_time":1.5,"cpu_time":1,"time_unit":"us","items_per_second":5}]}`))
	seed("pytest-benchmark", []byte(`{"benchmarks":[{"name":"t[1]","fullname":"a.py::t[1]","stats":{"mean":1e-6,"ops":1e6,"outliers":"1;2"}}]}`))
	seed("criterion", []byte(`{"benchmark":{"full_id":"g/f 1","throughput":{"Bytes":64}},"estimates":{"mean":{"point_estimate":10},"slope":null}}`+"\n"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		s := Spec{Kind: KindFormat, Format: names[int(which)%len(names)]}
		checkExtract(t, s, Output{Stdout: data})
	})
}
