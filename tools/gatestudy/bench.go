package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// benchC is the study's benchmark: a dependent hash loop of ITERS
// iterations, plus PCT percent more of them (the planted slowdown: work
// the run parameter adds, known exactly), timed in-process once per run,
// as a CI benchmark prints its figure.
const benchC = `#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned work(unsigned long n) {
	unsigned h = 2166136261u;
	for (unsigned long i = 0; i < n; i++)
		h = (h ^ (unsigned)i) * 16777619u;
	return h;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: bench ITERS PCT\n");
		return 2;
	}
	unsigned long iters = strtoul(argv[1], 0, 10);
	double pct = atof(argv[2]);
	unsigned long n = iters + (unsigned long)(iters * pct / 100.0);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	unsigned sink = work(n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("work_ms: %.4f\nsink: %u\n", (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6, sink);
	return 0;
}
`

// bench is the built benchmark.
type bench struct {
	path  string
	iters int
	runs  int // runs taken, all schemes together
}

// buildBench compiles benchC with gcc -O2 into dir.
func buildBench(ctx context.Context, dir string) (*bench, error) {
	src := filepath.Join(dir, "bench.c")
	if err := os.WriteFile(src, []byte(benchC), 0o644); err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "bench")
	out, err := exec.CommandContext(ctx, "gcc", "-O2", "-o", bin, src).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("gcc -O2 -o %s %s: %v\n%s", bin, src, err, out)
	}
	return &bench{path: bin}, nil
}

// run takes one run with pct percent planted work and returns its work_ms.
func (b *bench) run(ctx context.Context, pct float64) (float64, error) {
	b.runs++
	out, err := exec.CommandContext(ctx, b.path, strconv.Itoa(b.iters), strconv.FormatFloat(pct, 'f', -1, 64)).Output()
	if err != nil {
		return 0, fmt.Errorf("%s %d %g: %v", b.path, b.iters, pct, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "work_ms: "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("%s: no work_ms in its output %q", b.path, out)
}

// calibrate sets the iterations so that a run takes about ms milliseconds
// (the median of 7 runs at a trial count).
func (b *bench) calibrate(ctx context.Context, ms float64) error {
	b.iters = 1_000_000
	for range 3 {
		var xs []float64
		for range 7 {
			v, err := b.run(ctx, 0)
			if err != nil {
				return err
			}
			xs = append(xs, v)
		}
		med := median(xs)
		if med <= 0 {
			return fmt.Errorf("calibration: a run of %d iterations took %g ms", b.iters, med)
		}
		b.iters = max(1000, int(float64(b.iters)*ms/med))
	}
	return nil
}
