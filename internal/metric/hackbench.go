package metric

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
)

// hackbench (Debian's rt-tests). lkp-tests' parser (programs/hackbench/
// parse) computes the data moved in KB, (tasks * messages * bytes) >> 10,
// and divides it by the time of each "Time:" line: hackbench.throughput is
// KB/s of the fastest run (hackbench.throughput_best too), and
// throughput_avg and throughput_worst are of the mean and slowest time.
// readHackbench names the same; with a single "Time:" line, as one
// hackbench invocation prints, only throughput is given (the other three
// would repeat it). hackbench prints the time with millisecond resolution:
// give it enough loops to run for a good fraction of a second.

var (
	hackbenchTasks = regexp.MustCompile(`(?m)^Running in .* mode with (\d+) groups using (\d+) file descriptors each \(== (\d+) tasks\)`)
	hackbenchMsgs  = regexp.MustCompile(`(?m)^Each sender (?:will pass|passed) (\d+) messages of (\d+) bytes`)
	hackbenchTime  = regexp.MustCompile(`^Time:\s+(\S+)`)
)

func readHackbench(data []byte) ([]Value, error) {
	var tasks, messages, size int64
	var times []float64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Bytes()
		if m := hackbenchTasks.FindSubmatch(line); m != nil {
			tasks, _ = strconv.ParseInt(string(m[3]), 10, 64)
		} else if m := hackbenchMsgs.FindSubmatch(line); m != nil {
			messages, _ = strconv.ParseInt(string(m[1]), 10, 64)
			size, _ = strconv.ParseInt(string(m[2]), 10, 64)
		} else if m := hackbenchTime.FindSubmatch(line); m != nil {
			t, err := parseNumber(string(m[1]))
			if err != nil {
				return nil, err
			}
			if t <= 0 {
				return nil, fmt.Errorf("Time: %s is too short to give a throughput (hackbench prints milliseconds: give it more loops)", m[1])
			}
			times = append(times, t)
		}
	}
	switch {
	case len(times) == 0:
		return nil, fmt.Errorf("no \"Time:\" line: %w", ErrMissing)
	case tasks == 0 || messages == 0 || size == 0:
		return nil, fmt.Errorf("no \"Running in ... tasks\" and \"Each sender will pass ... bytes\" lines before \"Time:\": %w", ErrMissing)
	}
	kb := float64((tasks * messages * size) >> 10)
	best, worst, sum := times[0], times[0], 0.0
	for _, t := range times {
		best, worst, sum = min(best, t), max(worst, t), sum+t
	}
	v := func(name string, t float64) Value {
		return Value{Name: name, Unit: "KB/s", Better: HigherIsBetter, Value: kb / t}
	}
	vals := []Value{v("throughput", best)}
	if len(times) > 1 {
		vals = append(vals, v("throughput_best", best), v("throughput_avg", sum/float64(len(times))), v("throughput_worst", worst))
	}
	return vals, nil
}
