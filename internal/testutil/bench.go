package testutil

import "fmt"

// BenchC is a small CPU-bound benchmark: it repeats a hash loop `passes`
// times and prints the best of five in-process timings.
func BenchC(passes int, comment string) string {
	return fmt.Sprintf(`/* %s */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned work(unsigned n) {
	unsigned h = 2166136261u;
	for (int p = 0; p < %d; p++)
		for (unsigned i = 0; i < n; i++)
			h = (h ^ i) * 16777619u;
	return h;
}

int main(int argc, char **argv) {
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 2000000;
	double best = 1e30;
	unsigned sink = 0;
	for (int k = 0; k < 5; k++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		sink += work(n);
		clock_gettime(CLOCK_MONOTONIC, &b);
		double ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
		if (ms < best) best = ms;
	}
	printf("work_ms: %%.3f\nsink: %%u\n", best, sink);
	return 0;
}
`, comment, passes)
}

// BenchMakefile builds BenchC's bench.c, honouring CFLAGS.
const BenchMakefile = "bench: bench.c\n\tgcc -O2 $(CFLAGS) -o bench bench.c\n"
