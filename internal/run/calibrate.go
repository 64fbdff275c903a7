package run

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// CalibrateOptions tunes Calibrate. The zero value gives the defaults,
// about 0.5 s in all on two CPUs.
type CalibrateOptions struct {
	Rounds int           // samples per CPU; default 8
	Sample time.Duration // target length of one sample; default 30ms
}

// CPUStat is the calibration of one CPU.
type CPUStat struct {
	CPU     int
	Median  time.Duration   // median time of one sample
	CV      float64         // coefficient of variation of the samples (stddev/mean)
	Samples []time.Duration // in the order taken
}

// Calibration is the result of Calibrate.
type Calibration struct {
	// Iterations is the fixed amount of work of one sample (loop
	// iterations), sized once at the start to take about Sample.
	Iterations int64
	CPUs       []CPUStat // in the order asked for
}

// Calibrate measures how fast and how steady each of cpus is (nil: every
// CPU in Allowed). It runs a fixed CPU-bound loop (a latency-bound xorshift
// chain, no memory traffic) on a locked OS thread pinned to one CPU at a
// time, alternating CPUs within each round and reversing the order every
// other round, so that a drift of the machine's speed hits all CPUs alike.
// The work per sample is sized once, on the first CPU, to take about
// opts.Sample.
//
// The figures describe a short in-process loop, not a whole benchmark
// process: use them to choose a CPU and to warn about noise, not as a
// promise.
func Calibrate(ctx context.Context, cpus []int, opts CalibrateOptions) (*Calibration, error) {
	if opts.Rounds == 0 {
		opts.Rounds = 8
	}
	if opts.Sample == 0 {
		opts.Sample = 30 * time.Millisecond
	}
	if opts.Rounds < 2 {
		return nil, fmt.Errorf("calibrate: need at least 2 rounds, got %d", opts.Rounds)
	}
	if opts.Sample < 0 {
		return nil, fmt.Errorf("calibrate: negative sample time %v", opts.Sample)
	}
	if cpus == nil {
		cpus = Allowed()
		if len(cpus) == 0 {
			return nil, fmt.Errorf("calibrate: cannot read this process's CPU affinity")
		}
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("calibrate: no CPUs given")
	}
	seen := make(map[int]bool)
	for _, cpu := range cpus {
		if seen[cpu] {
			return nil, fmt.Errorf("calibrate: CPU %d listed twice", cpu)
		}
		seen[cpu] = true
		if err := checkCPU(cpu); err != nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
	}

	cal := &Calibration{CPUs: make([]CPUStat, len(cpus))}
	for i, cpu := range cpus {
		cal.CPUs[i] = CPUStat{CPU: cpu, Samples: make([]time.Duration, 0, opts.Rounds)}
	}
	err := onPinnedThread(cpus[0], func(pin func(int) error) error {
		cal.Iterations = sizeWork(opts.Sample)
		for r := range opts.Rounds {
			for j := range cpus {
				i := j
				if r%2 == 1 {
					i = len(cpus) - 1 - j
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := pin(cpus[i]); err != nil {
					return err
				}
				start := time.Now()
				sink.Add(spin(cal.Iterations))
				cal.CPUs[i].Samples = append(cal.CPUs[i].Samples, time.Since(start))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("calibrate CPUs %s: %w", formatCPUs(cpus), err)
	}
	for i := range cal.CPUs {
		cal.CPUs[i].Median, cal.CPUs[i].CV = summarize(cal.CPUs[i].Samples)
	}
	return cal, nil
}

// sizeWork returns the number of spin iterations that take about d on the
// current thread.
func sizeWork(d time.Duration) int64 {
	n := int64(1 << 12)
	for {
		start := time.Now()
		sink.Add(spin(n))
		el := time.Since(start)
		if el >= d/8 || el >= 5*time.Millisecond || n >= 1<<40 {
			m := int64(float64(n) * float64(d) / float64(max(el, 1)))
			return max(m, 1)
		}
		n *= 2
	}
}

// sink keeps spin's result alive.
var sink atomic.Uint64

// spin is the calibration workload: a dependent chain of xorshift steps.
//
//go:noinline
func spin(n int64) uint64 {
	x := uint64(88172645463325252)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// summarize returns the median and the coefficient of variation.
func summarize(ds []time.Duration) (time.Duration, float64) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if len(s) < 2 {
		return med, 0
	}
	var sum float64
	for _, d := range s {
		sum += float64(d)
	}
	mean := sum / float64(len(s))
	var ss float64
	for _, d := range s {
		ss += (float64(d) - mean) * (float64(d) - mean)
	}
	return med, math.Sqrt(ss/float64(len(s)-1)) / mean
}

// Stat returns the calibration of cpu.
func (c *Calibration) Stat(cpu int) (CPUStat, bool) {
	if c == nil {
		return CPUStat{}, false
	}
	for _, s := range c.CPUs {
		if s.CPU == cpu {
			return s, true
		}
	}
	return CPUStat{}, false
}

// Quietest returns the CPU to pin benchmarks to: the one with the lowest
// score CV + (median/fastest median - 1), that is, its noise plus how much
// slower than the fastest CPU it ran, both relative (a CPU that is slower
// than another shares its core with other work). Ties go to the lower CPU
// number. It returns -1 for an empty calibration.
func (c *Calibration) Quietest() int {
	if c == nil || len(c.CPUs) == 0 {
		return -1
	}
	fastest := c.CPUs[0].Median
	for _, s := range c.CPUs {
		fastest = min(fastest, s.Median)
	}
	best, bestScore := -1, math.Inf(1)
	for _, s := range c.CPUs {
		score := s.CV
		if fastest > 0 {
			score += float64(s.Median)/float64(fastest) - 1
		}
		if score < bestScore || score == bestScore && s.CPU < best {
			best, bestScore = s.CPU, score
		}
	}
	return best
}

// CV returns the coefficient of variation measured on cpu, or NaN when cpu
// was not calibrated.
func (c *Calibration) CV(cpu int) float64 {
	s, ok := c.Stat(cpu)
	if !ok {
		return math.NaN()
	}
	return s.CV
}

// String summarises the calibration on one line, e.g.
// "CPU 0 31.2ms CV 0.8%, CPU 1 52.4ms CV 4.1%".
func (c *Calibration) String() string {
	if c == nil || len(c.CPUs) == 0 {
		return "no CPUs calibrated"
	}
	parts := make([]string, len(c.CPUs))
	for i, s := range c.CPUs {
		parts[i] = fmt.Sprintf("CPU %d %v CV %.1f%%", s.CPU, s.Median.Round(100*time.Microsecond), 100*s.CV)
	}
	return strings.Join(parts, ", ")
}
