package suite

import (
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// Benchmarks of programs and libraries, each run for real and briefly.

func TestRedis(t *testing.T) {
	testutil.NeedTool(t, "redis-server", "redis-benchmark")
	// On a Unix socket (the default) and on a free loopback port.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	for _, p := range []string{"0", strconv.Itoa(port)} {
		dir, tmp := scratch(t, nil)
		u := expand(t, "redis", map[string]string{"tests": "set,get,lpush", "requests": "2000", "clients": "4", "port": p})
		got, _ := runUse(t, u, dir)
		wantMetrics(t, got, map[string]byte{"redis.set_total_throughput_rps": '+', "redis.get_total_throughput_rps": '+',
			"redis.LPUSH": '+', "redis.set_latency_99%_ms": '-', "redis.get_latency_avg_ms": '-'})
		leftNothing(t, tmp)
		if p != "0" {
			// The server is stopped: its port is free again.
			l, err := net.Listen("tcp", "127.0.0.1:"+p)
			if err != nil {
				t.Errorf("port %s still taken after the run: %v", p, err)
			} else {
				l.Close()
			}
		}
	}
}

// gbenchSource is a Google Benchmark program: a "library" function and its
// benchmarks.
const gbenchSource = `#include <benchmark/benchmark.h>
#include <cstring>
static void copy(char *dst, const char *src, size_t n) { memcpy(dst, src, n); }
static void BM_copy(benchmark::State& state) {
  static char src[4096], dst[4096];
  for (auto _ : state) { copy(dst, src, state.range(0)); benchmark::DoNotOptimize(dst); }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_copy)->Arg(64)->Arg(1024);
BENCHMARK_MAIN();
`

func TestGBench(t *testing.T) {
	testutil.NeedTool(t, "g++", "benchmark.h")
	dir, _ := scratch(t, map[string]string{"bench.cc": gbenchSource})
	build := exec.Command("g++", "-O2", "-o", "bench", "bench.cc", "-lbenchmark", "-lpthread")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	u := expand(t, "gbench", map[string]string{"binary": "./bench", "min_time": "0.01", "repetitions": "2"})
	got, _ := runUse(t, u, dir)
	wantMetrics(t, got, map[string]byte{"gbench.BM_copy/64.real_time": '-', "gbench.BM_copy/64.cpu_time": '-',
		"gbench.BM_copy/1024.bytes_per_second": '+'})
	if _, ok := got["gbench.BM_copy/64_mean.real_time"]; ok {
		t.Errorf("aggregates read beside the repetitions: %v", names(got))
	}
}

func TestHyperfine(t *testing.T) {
	testutil.NeedTool(t, "hyperfine")
	dir, tmp := scratch(t, map[string]string{"work.sh": "#!/bin/sh\nsleep 0.02\n"})
	u := expand(t, "hyperfine", map[string]string{"command": "sh ./work.sh", "runs": "3", "warmup": "0"})
	got, _ := runUse(t, u, dir)
	wantMetrics(t, got, map[string]byte{"hyperfine.sh_./work.sh.mean": '-', "hyperfine.sh_./work.sh.max": '-'})
	if m := got["hyperfine.sh_./work.sh.mean"].Value; m < 0.02 || m > 1 {
		t.Errorf("mean %v s, want about 0.02", m)
	}
	leftNothing(t, tmp)
	u = expand(t, "hyperfine", map[string]string{"command": "sleep 0.01", "name_as": "nap", "runs": "2", "shell": "none"})
	got, _ = runUse(t, u, dir)
	wantMetrics(t, got, map[string]byte{"hyperfine.nap.mean": '-', "hyperfine.nap.min": '-'})
}

func TestPytestBenchmark(t *testing.T) {
	testutil.NeedTool(t, "pytest")
	dir, tmp := scratch(t, map[string]string{"test_fib.py": `import pytest

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

@pytest.mark.parametrize("n", [5, 10])
def test_fib(benchmark, n):
    benchmark(fib, n)

def test_not_a_benchmark():
    assert fib(10) == 55
`})
	u := expand(t, "pytest-benchmark", map[string]string{"max_time": "0.01", "min_rounds": "3"})
	got, _ := runUse(t, u, dir)
	wantMetrics(t, got, map[string]byte{"pytest-benchmark.test_fib_5.mean": '-', "pytest-benchmark.test_fib_10.median": '-',
		"pytest-benchmark.test_fib_10.ops": '+'})
	if f5, f10 := got["pytest-benchmark.test_fib_5.min"].Value, got["pytest-benchmark.test_fib_10.min"].Value; !(f10 > f5) {
		t.Errorf("fib(10) min %v s not slower than fib(5) %v s", f10, f5)
	}
	leftNothing(t, tmp)
}

func TestGoBench(t *testing.T) {
	testutil.NeedTool(t, "go")
	dir, _ := scratch(t, map[string]string{
		"go.mod": "module example.com/b\n\ngo 1.21\n",
		"b_test.go": `package b

import "testing"

func BenchmarkSum(b *testing.B) {
	s := 0
	for i := 0; i < b.N; i++ {
		s += i
	}
	_ = s
}
`})
	u := expand(t, "gobench", map[string]string{"package": ".", "benchtime": "1000x", "count": "2", "benchmem": "true"})
	got, stderr := runUse(t, u, dir)
	var units []string
	for _, n := range names(got) {
		// gobench.Sum-<GOMAXPROCS>.<unit>
		if prefix, unit, ok := strings.Cut(n, "."); ok && prefix == "gobench" && strings.HasPrefix(unit, "Sum") {
			units = append(units, unit[strings.Index(unit, ".")+1:])
			if got[n].Value < 0 || (unit[strings.Index(unit, ".")+1:] == "sec/op" && got[n].Value <= 0) {
				t.Errorf("%s = %v", n, got[n].Value)
			}
		}
	}
	if !slices.Equal(units, []string{"B/op", "allocs/op", "sec/op"}) {
		t.Errorf("units of gobench.Sum-N: %v, want B/op, allocs/op and sec/op (benchmem); metrics %v\nstderr:\n%s", units, names(got), stderr)
	}
}
