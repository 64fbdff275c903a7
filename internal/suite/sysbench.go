package suite

import "strings"

// sysbench: the cpu, memory, threads and mutex tests lkp runs as
// sysbench-cpu, sysbench-memory, sysbench-threads and sysbench-mutex.
//
//	suite: {name: sysbench, test: cpu, threads: 2, time: 10}
//
// Metrics as lkp names them, under sysbench-<test>.: workload (events),
// latency_ms.min, .avg, .max, .95th, events/thread.avg and .stddev,
// runtime/thread.avg and .stddev; memory adds throughput_ops/s and
// throughput_MB/s; cpu adds throughput_events/s. The key metric: cpu
// throughput_events/s, memory throughput_MB/s, threads workload (per time;
// latency_ms.avg when the run is bounded by events), mutex latency_ms.avg
// (one event is one thread's whole lock loop).
func sysbench() *Suite {
	return &Suite{
		Name:    "sysbench",
		Summary: "sysbench cpu, memory, threads or mutex",
		Options: []Option{
			{Name: "test", Default: "cpu", Doc: "cpu, memory, threads or mutex", check: oneOf("cpu", "memory", "threads", "mutex")},
			{Name: "threads", Default: "1", Doc: "worker threads (--threads)", check: count(1)},
			{Name: "time", Default: "10", Doc: "seconds to run (--time; 0: no time limit)", check: count(0)},
			{Name: "events", Default: "0", Doc: "events to run (--events; 0: no event limit)", check: count(0)},
			{Name: "cpu_max_prime", Default: "10000", Doc: "cpu: primes up to this (--cpu-max-prime)", check: count(1)},
			{Name: "memory_block_size", Default: "1K", Doc: "memory: block size", check: matches(reSize, "a size (1K, 1M)")},
			{Name: "memory_total_size", Default: "100G", Doc: "memory: total data to transfer", check: matches(reSize, "a size (1G, 100G)")},
			{Name: "memory_oper", Default: "write", Doc: "memory: read, write or none", check: oneOf("read", "write", "none")},
			{Name: "memory_access_mode", Default: "seq", Doc: "memory: seq or rnd", check: oneOf("seq", "rnd")},
			{Name: "thread_yields", Default: "1000", Doc: "threads: yields per lock", check: count(1)},
			{Name: "thread_locks", Default: "8", Doc: "threads: mutexes", check: count(1)},
			{Name: "mutex_num", Default: "4096", Doc: "mutex: mutexes", check: count(1)},
			{Name: "mutex_locks", Default: "50000", Doc: "mutex: locks per thread", check: count(1)},
			{Name: "mutex_loops", Default: "10000", Doc: "mutex: empty loops between locks", check: count(0)},
			program("sysbench", "sysbench"),
			extra("sysbench"),
		},
		expand: func(o values, given map[string]bool) (*Use, error) {
			test := o.get("test")
			var mine []string
			for _, opt := range []string{"cpu_max_prime", "memory_block_size", "memory_total_size", "memory_oper", "memory_access_mode",
				"thread_yields", "thread_locks", "mutex_num", "mutex_locks", "mutex_loops"} {
				prefix, _, _ := strings.Cut(opt, "_")
				of := map[string]string{"cpu": "cpu", "memory": "memory", "thread": "threads", "mutex": "mutex"}[prefix]
				if of == test {
					mine = append(mine, opt)
				} else if given[opt] {
					return nil, o.errorf(opt, "is an option of sysbench's %s test, and this job runs its %s test", of, test)
				}
			}
			if (test == "cpu" || test == "threads") && o.get("time") == "0" && o.get("events") == "0" {
				return nil, o.errorf("time", "0 with events 0 runs the %s test for ever", test)
			}
			s := newScript("sysbench")
			s.need(Program{Command: o.get("program"), Package: "sysbench"})
			cmd := quote(o.get("program")) + " --threads=" + o.get("threads") + " --time=" + o.get("time") + " --events=" + o.get("events") + " " + test
			for _, opt := range mine {
				cmd += flag("--"+strings.ReplaceAll(opt, "_", "-"), o.get(opt))
			}
			s.add("%s%s run", cmd, args(o.get("args")))
			u := s.use("")
			format := "sysbench-" + test
			kpi := map[string]string{"cpu": "throughput_events/s", "memory": "throughput_MB/s", "threads": "workload", "mutex": "latency_ms.avg"}[test]
			if test == "threads" && o.get("time") == "0" {
				kpi = "latency_ms.avg"
			}
			better := higher
			if kpi == "latency_ms.avg" {
				better = lower
			}
			u.Metrics = append(u.Metrics, named(format, format+"."+kpi, better), family(format))
			return u, nil
		},
	}
}
