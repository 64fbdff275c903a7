package testutil

import (
	"fmt"
	"strings"
)

// AlignBench is a generated C benchmark project for end-to-end tests of
// the layout experiments (triage's restore and source patch), built by
// gcc with its own Makefile, whose truth is known from its layout: bench
// reports "t_ms: V", where V is Work, times 1.3 when its hot array hot_x
// sits off a 32-byte boundary (what the demo's AVX2 data kernel costs
// where a vector load splits a cache line), times about 1 % of noise from
// the clock. A run takes a millisecond, so a triage of it takes seconds;
// the demo (internal/demo) is the same effect timed for real.
//
// data.c holds Data, global definitions of the zeroed data before hot_x
// (one a line, in source order: the Makefile keeps it with
// -fno-toplevel-reorder and aligns data only as far as the ABI asks,
// -malign-data=abi, so hot_x, 16-byte aligned, sits 16 bytes further for
// every 16 bytes of Data). A commit that drops or resizes one moves
// hot_x, as the seed report's removed static key moved its neighbours.
//
// With Code set, the time also depends on where the code sits: 1.3 times
// more when the function hot_fn starts off a 32-byte boundary (a loop
// that crosses a line, as the demo's text kernel's does). bench.c defines
// the functions of Code before hot_fn, in source order, every function
// aligned to 16 bytes (-falign-functions=16), so a commit that drops a
// function of up to 16 bytes moves hot_fn by 16.
type AlignBench struct {
	// Data are data.c's definitions before hot_x, e.g. "double range[2];".
	Data []string
	// Code are bench.c's function definitions before hot_fn, e.g.
	// "__attribute__((noinline)) long one(long x) { return x + 1; }";
	// nil leaves hot_fn out.
	Code []string
	// Work is the figure reported with hot_x (and hot_fn) on a 32-byte
	// boundary: the real cost of the code (default 100).
	Work float64
	// CC is the compiler the Makefile calls (default $(CC)); an absolute
	// path makes a build that perfbot's compiler wrappers cannot reach.
	CC string
	// Flags are added to every compile, e.g. "-g".
	Flags string
}

// AlignBenchJob is the name of the project's perfbot job file.
const AlignBenchJob = "perfbot.yaml"

// Files returns the project's files (path -> content): bench.c, data.c,
// the Makefile, the job file (AlignBenchJob) and .gitignore.
func (b AlignBench) Files() map[string]string {
	work := b.Work
	if work == 0 {
		work = 100
	}
	data := strings.Join(b.Data, "\n")
	if data != "" {
		data += "\n"
	}
	code, hot := "", ""
	if b.Code != nil {
		code = strings.Join(b.Code, "\n") + "\n" + alignBenchHotFn
		hot = "\t/* hot_fn's loop crosses a line when it starts off a 32-byte\n\t   boundary. */\n" +
			"\tif ((uintptr_t)hot_fn % 32 != 0 && hot_fn(1))\n\t\tt *= 1.3;\n"
	}
	cc, flags := b.CC, b.Flags
	if cc == "" {
		cc = "$(CC)"
	}
	if flags != "" {
		flags = " " + flags
	}
	return map[string]string{
		"bench.c": fmt.Sprintf(alignBenchMain, code, work, hot),
		"data.c":  "/* data.c: the benchmark's zeroed data, in source order. */\n" + data + "float hot_x[1024];\n",
		"Makefile": "bench:\n" +
			"\t" + cc + " -O2 -fno-toplevel-reorder -malign-data=abi" + flags + " -c -o data.o data.c\n" +
			"\t" + cc + " -O2 -fno-toplevel-reorder -falign-functions=16" + flags + " -c -o bench.o bench.c\n" +
			"\t" + cc + " -o bench data.o bench.o\n",
		AlignBenchJob: alignBenchJobFile,
		".gitignore":  "*.o\nbench\n",
	}
}

const alignBenchMain = `/* bench: reports what hot_x's alignment would cost an AVX2 kernel. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

extern float hot_x[1024];
%s
int main(void)
{
	struct timespec ts;
	double t = %g, noise = 0;

	/* Off a 32-byte boundary, half of the kernel's 32-byte loads split a
	   cache line: 1.3 times the time. */
	if ((uintptr_t)hot_x %% 32 != 0)
		t *= 1.3;
%s	clock_gettime(CLOCK_MONOTONIC, &ts);
	srand((unsigned)ts.tv_nsec ^ (unsigned)getpid());
	for (int i = 0; i < 4; i++)
		noise += rand() / (double)RAND_MAX - 0.5;
	for (int i = 0; i < 1024; i++)
		hot_x[i] += i;
	printf("t_ms: %%.4f\n", t * (1 + 0.01 * noise) + 0 * hot_x[1]);
	return 0;
}
`

// alignBenchHotFn is the function whose place matters with Code set.
const alignBenchHotFn = `__attribute__((noinline)) long hot_fn(long x)
{
	return x * 7 + 3;
}
`

const alignBenchJobFile = `repo: .
build:
  command: make -s bench
  artifacts: [bench]
run:
  command: ./bench
  timeout: 30s
  cpu: none
runs: 10
metrics:
  - name: t_ms
    regex: 't_ms: (?P<value>[0-9.]+)'
    better: lower
`
