package demo

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
)

// tree is the state of the generated project at one commit. Every commit
// of every history is one tree rendered in full; the fields are the only
// ways the commits differ.
type tree struct {
	// Lead is the padding (bytes of int3) that text.c puts before the
	// kernel, so that the base's inner loop starts at the offset of its
	// 64-byte line that [Placement] chose (see Placement.Lead).
	Lead int
	// Hook, when not zero, adds the text_trace helper of Hook bytes of
	// code just before text_kernel, which moves text_kernel and its inner
	// loop Hook bytes further (text alignment only; no instruction of the
	// kernel changes).
	Hook int
	// NoRange drops the unused 16-byte global data_range that precedes
	// data_x and data_y, which moves both arrays by 16 bytes: from 0 to 16
	// mod 32, so half of their 32-byte vector loads split a cache line
	// (data alignment only; no instruction changes).
	NoRange bool
	// ExtraWords, when not zero, makes text_batch call text_kernel a
	// second time over the first ExtraWords input words after each full
	// call: real extra work in the hot path, placed after text_kernel so
	// that the kernel itself does not move.
	ExtraWords string
	// ExtraWhy is the comment above the extra call.
	ExtraWhy string
	// Rename is the state of a rename of the local variable tbest to
	// text_best: 0 not started, 1 half done (the declaration only: the
	// build fails), 2 done. Local names leave no trace in the binary.
	Rename int
	// Notes are the entries of NOTES.md's log, oldest first.
	Notes []string
	// Remarks are extra comment lines at the end of bench.c's header
	// comment.
	Remarks []string
	// Topic are the entries of NOTES.md's section on the topic branch
	// (the "bisect-merge" history's merged branch); none elsewhere.
	Topic []string
}

// files renders the tree: file name to content.
func (t *tree) files() (map[string]string, error) {
	out := make(map[string]string)
	for name, tmpl := range templates {
		var b bytes.Buffer
		if err := tmpl.Execute(&b, t); err != nil {
			return nil, fmt.Errorf("rendering %s: %v", name, err)
		}
		out[name] = b.String()
	}
	return out, nil
}

// clone returns a deep copy of t.
func (t *tree) clone() *tree {
	c := *t
	c.Notes = append([]string(nil), t.Notes...)
	c.Remarks = append([]string(nil), t.Remarks...)
	c.Topic = append([]string(nil), t.Topic...)
	return &c
}

var templates = map[string]*template.Template{
	"bench.c":     parse("bench.c", benchC),
	"data.c":      parse("data.c", dataC),
	"text.c":      parse("text.c", textC),
	"Makefile":    parse("Makefile", makefile),
	"NOTES.md":    parse("NOTES.md", notesMD),
	".gitignore":  parse(".gitignore", gitignore),
	JobFileName:   parse(JobFileName, jobYAML),
	"README.md":   parse("README.md", readmeMD),
	"tools/pad.c": parse("tools/pad.c", padC),
}

func parse(name, text string) *template.Template {
	funcs := template.FuncMap{
		"best": func(t *tree) string {
			if t.Rename == 2 {
				return "text_best"
			}
			return "tbest"
		},
		"bestDecl": func(t *tree) string {
			if t.Rename >= 1 {
				return "text_best"
			}
			return "tbest"
		},
		"trim": strings.TrimSpace,
		"sub":  func(a, b int) int { return a - b },
	}
	return template.Must(template.New(name).Funcs(funcs).Parse(text))
}

// The benchmark. Its layout is deliberate; see the comments in it and
// the package documentation before changing anything: text.c, linked
// right after data.c with no alignment, puts text_kernel's inner loop
// where [Placement] says; data.c puts data_x at 0 mod 32.
const benchC = `/*
 * bench: a small benchmark with two kernels, for perfbot's demo.
 *
 * text_kernel (text.c) sums each input word and its right shifts, one
 * to four terms per word.  Its short inner loop runs fast or slow
 * depending on where it sits in its 64-byte line of code.  data_kernel (data.c)
 * computes y[i] += a*x[i] over two float arrays kept in L1; its vector
 * loads run fast or slow depending on the arrays' alignment.
 *
 * Each kernel is timed in batches of calls (40 by default, about 2 ms
 * each), alternating between the kernels, and the fastest batch is
 * printed, in milliseconds:
 *
 *	text_ms: 1.944
 *	data_ms: 1.554
 *
 * The clock is the thread's CPU time, so that time spent waiting for a
 * CPU on a busy host does not count.
 *
 * Usage: bench [text|data|all] [batches]
{{- range .Remarks}}
 *
 * {{.}}
{{- end}}
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* barrier stops the compiler from keeping memory values across it. */
#define barrier() __asm__ volatile("" ::: "memory")

#define N 4096			/* input words per text_kernel call */
#define TEXT_CALLS 500		/* text_kernel calls per timed batch */
#define DATA_CALLS 10000	/* data_kernel calls per timed batch */

void data_init(void);
void data_kernel(float a);
unsigned long text_kernel(const unsigned *a, long n);

unsigned text_input[N];

/* now returns the thread's CPU time in milliseconds. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* text_fill fills a with n pseudo-random words from the seed r. */
void text_fill(unsigned *a, long n, unsigned r)
{
	for (long i = 0; i < n; i++) {
		r = r * 1103515245u + 12345u;
		a[i] = r;
	}
}
/* text_batch times one batch of text_kernel calls. */
__attribute__((noinline)) double text_batch(unsigned long *sum)
{
	double t0 = now();

	for (int i = 0; i < TEXT_CALLS; i++) {
		barrier();
		*sum += text_kernel(text_input, N);
{{- if .ExtraWords}}
		/* {{.ExtraWhy}} */
		barrier();
		*sum += text_kernel(text_input, {{.ExtraWords}});
{{- end}}
	}
	return now() - t0;
}

/* data_batch times one batch of data_kernel calls. */
__attribute__((noinline)) double data_batch(void)
{
	double t0 = now();

	for (int i = 0; i < DATA_CALLS; i++)
		data_kernel(1e-7f);
	return now() - t0;
}

/*
 * run is the whole program.  main only calls it: gcc puts main in
 * .text.startup, before all other code, so a main that never changes
 * keeps the kernels where they are.
 */
__attribute__((noinline)) static int run(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "all";
	int batches = argc > 2 ? atoi(argv[2]) : 40;
	int text = !strcmp(which, "all") || !strcmp(which, "text");
	int data = !strcmp(which, "all") || !strcmp(which, "data");
	double {{bestDecl .}} = 1e300, dbest = 1e300;
	unsigned long sum = 0;

	if ((!text && !data) || batches < 1) {
		fprintf(stderr, "usage: bench [text|data|all] [batches]\n");
		return 2;
	}
	text_fill(text_input, N, 12345);
	data_init();
	for (int b = 0; b < batches; b++) {
		if (text) {
			double t = text_batch(&sum);

			if (t < {{best .}})
				{{best .}} = t;
		}
		if (data) {
			double t = data_batch();

			if (t < dbest)
				dbest = t;
		}
	}
	if (text)
		printf("text_ms: %.3f\n", {{best .}});
	if (data)
		printf("data_ms: %.3f\n", dbest);
	printf("checksum: %lu\n", sum);
	return 0;
}

int main(int argc, char **argv)
{
	return run(argc, argv);
}
`

const dataC = `/*
 * data.c: the data kernel, y[i] += a*x[i] over two 16 KiB float arrays
 * that stay in L1.  The Makefile builds this file with AVX2 and FMA,
 * keeps its globals in source order (-fno-toplevel-reorder) and aligns
 * them only as far as the ABI asks (16 bytes, -malign-data=abi), so the
 * arrays' offset in a 32-byte vector follows from what precedes them.
 */
#define N 4096
{{if not .NoRange}}
/* data_range holds the smallest and the largest x, for reports. */
double data_range[2];
{{end}}
float data_x[N];
float data_y[N];

/* data_init fills x with small values and clears y. */
void data_init(void)
{
	for (int i = 0; i < N; i++) {
		data_x[i] = (float)(i % 64) / 64.0f;
		data_y[i] = 0;
	}
}

/* data_kernel adds a*x to y. */
__attribute__((noinline)) void data_kernel(float a)
{
	for (int i = 0; i < N; i++)
		data_y[i] += a * data_x[i];
}
`

// kernelCFLAGS builds text.c (the Makefile's KERNEL_CFLAGS): the
// variable-trip loop shape that shows its alignment, with no padding.
const kernelCFLAGS = `-O2 -fno-tree-vectorize -fno-if-conversion -fno-if-conversion2 \
	-fno-toplevel-reorder -falign-functions=1 -falign-loops=1 \
	-falign-jumps=1 -falign-labels=1 -fno-asynchronous-unwind-tables`

const makefile = `# Builds ./bench.  CFLAGS, LDFLAGS and EXTRA_OBJS (objects linked before
# the benchmark's own, such as padding) come from the environment or the
# command line, so that a commit can be rebuilt with other layouts:
#
#	make bench CFLAGS='-falign-functions=64 -falign-loops=64'
#	make bench EXTRA_OBJS=/tmp/pad.o
#
# tools/pad.c makes such a padding object.

TEXT_CFLAGS = -O2 -fno-asynchronous-unwind-tables
DATA_CFLAGS = -O3 -mavx2 -mfma -fno-toplevel-reorder -malign-data=abi \
	-fno-asynchronous-unwind-tables
# text.c keeps its code in source order with no alignment padding, so
# that its inner loop sits exactly where its lead padding puts it.
KERNEL_CFLAGS = ` + kernelCFLAGS + `

.PHONY: bench clean

# Always rebuilt from scratch: the flags may differ from the last build.
bench:
	$(CC) $(DATA_CFLAGS) $(CFLAGS) -c -o data.o data.c
	$(CC) $(KERNEL_CFLAGS) $(CFLAGS) -c -o text.o text.c
	$(CC) $(TEXT_CFLAGS) $(CFLAGS) -c -o bench.o bench.c
	$(CC) $(LDFLAGS) -o bench $(EXTRA_OBJS) data.o text.o bench.o

clean:
	rm -f bench *.o
`

const textC = `/*
 * text.c: the text kernel, text_kernel, alone in its file.  The Makefile
 * links it right after data.c and builds it without alignment padding,
 * so its code starts exactly {{.Lead}} bytes after data.c's, which puts
 * the inner loop where the demo placed it (perfbot demo measures where
 * the CPU that runs it is fast and slow).
 */

{{- if .Lead}}

/* {{.Lead}} bytes of padding (int3) before the kernel. */
__asm__(".text\n.skip {{.Lead}}, 0xcc\n");
{{- end}}
{{if .Hook}}
/* text_trace is a patch site for a tracer; nothing calls it yet. */
__attribute__((noinline)) void text_trace(void)
{
	__asm__ volatile(".skip {{sub .Hook 1}}, 0x90");
}
{{end}}
/* text_kernel returns the sum of a[i] >> k over k <= i % 4. */
__attribute__((noinline)) unsigned long text_kernel(const unsigned *a, long n)
{
	unsigned long s = 0;

	for (long i = 0; i < n; i++) {
		unsigned x = (i & 3) + 1;
		unsigned long v = a[i];

		do {
			s += v;
			v >>= 1;
		} while (--x);
	}
	return s;
}
`

const padC = `/*
 * pad.c: a padding object.  Linked first (make bench EXTRA_OBJS=pad.o),
 * it moves the benchmark's code by TEXT_PAD bytes and its zeroed data
 * by DATA_PAD bytes, both multiples of 16:
 *
 *	cc -c -DTEXT_PAD=48 -DDATA_PAD=16 -o pad.o tools/pad.c
 */
#ifndef TEXT_PAD
#define TEXT_PAD 0
#endif
#ifndef DATA_PAD
#define DATA_PAD 0
#endif

#if TEXT_PAD % 16 || DATA_PAD % 16
#error "TEXT_PAD and DATA_PAD must be multiples of 16"
#endif

#define PAD_STR(x) PAD_STR2(x)
#define PAD_STR2(x) #x

#if TEXT_PAD > 0
__asm__(".text\n"
	".p2align 4\n"
	".globl pad_text\n"
	"pad_text:\n"
	".skip " PAD_STR(TEXT_PAD) ", 0xcc\n");
#endif

#if DATA_PAD > 0
__attribute__((aligned(16))) char pad_data[DATA_PAD];
#endif
`

const notesMD = `# Notes

How the benchmark is measured and what changed, newest last.

- ` + "`text_ms`" + ` and ` + "`data_ms`" + ` are the fastest of 40 timed batches in
  one process, in milliseconds of CPU time; lower is better.
{{- range .Notes}}
- {{.}}
{{- end}}
{{- if .Topic}}

From the topic branch (the head scan):
{{- range .Topic}}
- {{.}}
{{- end}}
{{- end}}
`

const gitignore = `/bench
*.o
`

const readmeMD = `# bench

A small C benchmark with a git history, generated by perfbot's demo
package (internal/demo) for perfbot's demo and end-to-end tests.

    make bench && ./bench          # prints text_ms and data_ms
    perfbot compare perfbot.yaml REV1 REV2

NOTES.md says how the figures are measured.
`

// JobFileName is the name of the perfbot job file at the top of every
// generated repository.
const JobFileName = "perfbot.yaml"

const jobYAML = `# perfbot job for this benchmark: build with make, run ./bench, read
# the two kernels' times.
repo: .
build:
  command: make bench
  artifacts: [bench]
run:
  command: ./bench all 40
  timeout: 60s
runs: 6
metrics:
  - name: text_ms
    regex: 'text_ms: (?P<value>[0-9.]+)'
    better: lower
  - name: data_ms
    regex: 'data_ms: (?P<value>[0-9.]+)'
    better: lower
`
