package suite

import (
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// The system benchmarks lkp runs, each run for real, briefly (well under a
// second), and read with the suite's own metrics.

func TestStressNG(t *testing.T) {
	testutil.NeedTool(t, "stress-ng")
	for _, tc := range []struct {
		options map[string]string
		want    map[string]byte
	}{
		{map[string]string{"stressor": "mutex", "ops": "5000"},
			map[string]byte{"stress-ng.mutex.ops_per_sec": '+', "stress-ng.mutex.ops": '+', "stress-ng.mutex.nanosecs_per_mutex": '-'}},
		// Any stressor, with its own miscellaneous metrics or none.
		{map[string]string{"stressor": "cpu", "ops": "100", "instances": "2"},
			map[string]byte{"stress-ng.cpu.ops_per_sec": '+', "stress-ng.cpu.ops": '+'}},
	} {
		dir, tmp := scratch(t, nil)
		u := expand(t, "stress-ng", tc.options)
		if u.Metrics[0].Name != "stress-ng."+tc.options["stressor"]+".ops_per_sec" {
			t.Errorf("key metric %q, want lkp's stress-ng.<stressor>.ops_per_sec", u.Metrics[0].Name)
		}
		got, _ := runUse(t, u, dir)
		wantMetrics(t, got, tc.want)
		leftNothing(t, tmp)
	}
}

func TestHackbench(t *testing.T) {
	testutil.NeedTool(t, "hackbench")
	dir, _ := scratch(t, nil)
	u := expand(t, "hackbench", map[string]string{"groups": "2", "fds": "5", "loops": "400", "mode": "threads", "ipc": "pipe", "iterations": "3"})
	got, _ := runUse(t, u, dir)
	wantMetrics(t, got, map[string]byte{"hackbench.throughput": '+', "hackbench.throughput_best": '+',
		"hackbench.throughput_avg": '+', "hackbench.throughput_worst": '+'})
	if b, w := got["hackbench.throughput_best"].Value, got["hackbench.throughput_worst"].Value; b < w {
		t.Errorf("best %v < worst %v", b, w)
	}
	u = expand(t, "hackbench", map[string]string{"groups": "2", "fds": "5", "loops": "400"})
	got, _ = runUse(t, u, dir)
	if len(got) != 1 || got["hackbench.throughput"].Value <= 0 {
		t.Errorf("one hackbench: %v, want hackbench.throughput alone", names(got))
	}
}

func TestFio(t *testing.T) {
	testutil.NeedTool(t, "fio")
	dir, tmp := scratch(t, nil)
	u := expand(t, "fio", map[string]string{"rw": "randrw", "size": "2M", "numjobs": "2"})
	if len(u.Metrics) != 5 || u.Metrics[0].Name != "fio.read_bw_MBps" || u.Metrics[2].Name != "fio.write_bw_MBps" {
		t.Errorf("randrw metrics %+v: want read and write bandwidth and IOPS by name, then the family", u.Metrics)
	}
	got, _ := runUse(t, u, dir)
	wantMetrics(t, got, map[string]byte{"fio.read_bw_MBps": '+', "fio.read_iops": '+', "fio.write_bw_MBps": '+',
		"fio.write_iops": '+', "fio.read_clat_mean_ns": '-', "fio.write_clat_99%_ns": '-', "fio.workload": '+'})
	leftNothing(t, tmp)

	// A job file of the repository; its files go where it says.
	dir, tmp = scratch(t, map[string]string{"bench.fio": "[seqread]\nrw=read\nsize=1M\nbs=64k\nfilename=fio.data\n"})
	got, _ = runUse(t, expand(t, "fio", map[string]string{"jobfile": "bench.fio"}), dir)
	wantMetrics(t, got, map[string]byte{"fio.read_bw_MBps": '+', "fio.workload": '+'})
	if _, ok := got["fio.write_iops"]; ok {
		t.Errorf("a read job gives write metrics: %v", names(got))
	}
	leftNothing(t, tmp)
}

func TestSysbench(t *testing.T) {
	testutil.NeedTool(t, "sysbench")
	dir, _ := scratch(t, nil)
	for test, tc := range map[string]struct {
		options map[string]string
		want    map[string]byte
	}{
		"cpu": {map[string]string{"time": "0", "events": "500", "cpu_max_prime": "2000"},
			map[string]byte{"sysbench-cpu.throughput_events/s": '+', "sysbench-cpu.workload": '+', "sysbench-cpu.latency_ms.max": '-'}},
		"memory": {map[string]string{"time": "0", "memory_total_size": "16M", "threads": "2"},
			map[string]byte{"sysbench-memory.throughput_MB/s": '+', "sysbench-memory.throughput_ops/s": '+', "sysbench-memory.workload": '+'}},
		"threads": {map[string]string{"time": "0", "events": "100", "threads": "2"},
			map[string]byte{"sysbench-threads.latency_ms.avg": '-', "sysbench-threads.workload": '+', "sysbench-threads.runtime/thread.avg": '-'}},
		"mutex": {map[string]string{"mutex_locks": "2000", "mutex_num": "64", "threads": "2"},
			map[string]byte{"sysbench-mutex.latency_ms.avg": '-', "sysbench-mutex.events/thread.avg": '+'}},
	} {
		tc.options["test"] = test
		u := expand(t, "sysbench", tc.options)
		got, _ := runUse(t, u, dir)
		wantMetrics(t, got, tc.want)
		if _, ok := tc.want[u.Metrics[0].Name]; !ok {
			t.Errorf("sysbench %s: key metric %s is not one the test checks", test, u.Metrics[0].Name)
		}
	}
}
