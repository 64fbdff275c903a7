package suite

import "strconv"

// hackbench (Debian's rt-tests): the scheduler's message-passing benchmark
// lkp runs, its throughput in KB/s as lkp computes it.
//
//	suite: {name: hackbench, groups: 10, loops: 100, mode: threads, ipc: pipe}
//
// Metrics: hackbench.throughput (the key metric); with iterations > 1 also
// hackbench.throughput_best, _avg and _worst over the iterations.
func hackbench() *Suite {
	return &Suite{
		Name:    "hackbench",
		Summary: "hackbench (rt-tests): scheduler message passing, KB/s",
		Options: []Option{
			{Name: "groups", Default: "10", Doc: "groups of senders and receivers (-g)", check: count(1)},
			{Name: "fds", Default: "20", Doc: "file descriptors (senders, and as many receivers) per group (-f)", check: count(1)},
			{Name: "loops", Default: "100", Doc: "messages each sender sends (-l); hackbench times in milliseconds, so make a run last a good fraction of a second", check: count(1)},
			{Name: "datasize", Default: "100", Doc: "bytes per message (-s)", check: count(1)},
			{Name: "mode", Default: "process", Doc: "process or threads", check: oneOf("process", "threads")},
			{Name: "ipc", Default: "socket", Doc: "socket or pipe", check: oneOf("socket", "pipe")},
			{Name: "iterations", Default: "1", Doc: "hackbench runs per perfbot run (lkp's throughput is the best of them)", check: count(1)},
			program("hackbench", "rt-tests"),
			extra("hackbench"),
		},
		expand: func(o values, given map[string]bool) (*Use, error) {
			s := newScript("hackbench")
			s.need(Program{Command: o.get("program"), Package: "rt-tests"})
			s.add("set -e")
			cmd := quote(o.get("program")) + " -g " + o.get("groups") + " -f " + o.get("fds") + " -l " + o.get("loops") + " -s " + o.get("datasize")
			if o.get("mode") == "threads" {
				cmd += " --threads"
			} else {
				cmd += " --process"
			}
			if o.get("ipc") == "pipe" {
				cmd += " --pipe"
			}
			cmd += args(o.get("args"))
			n, _ := strconv.Atoi(o.get("iterations"))
			if n == 1 {
				s.add("%s", cmd)
			} else {
				s.add("i=0")
				s.add("while [ $i -lt %d ]; do %s; i=$((i+1)); done", n, cmd)
			}
			u := s.use("")
			u.Metrics = append(u.Metrics, named("hackbench", "hackbench.throughput", higher))
			if n > 1 {
				u.Metrics = append(u.Metrics, family("hackbench"))
			}
			return u, nil
		},
	}
}
