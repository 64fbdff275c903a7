package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SeqBenchC is a benchmark whose figure is known in advance: it prints
// "work_ms: SCALE*X" for the number X its first argument gives. With
// SeqRunCommand, X comes from a fixed sequence, so a test of a statistical
// decision knows the truth (the ratio of two builds' scales and the
// sequence's spread) and cannot flake under load.
func SeqBenchC(scale float64) string {
	return fmt.Sprintf(`#include <stdio.h>
#include <stdlib.h>
#define SCALE %g
int main(int argc, char **argv) {
	double x = argc > 1 ? atof(argv[1]) : 1.0;
	printf("work_ms: %%.4f\n", SCALE * x);
	return 0;
}
`, scale)
}

// SeqBenchMakefile builds SeqBenchC's bench.c.
const SeqBenchMakefile = "bench: bench.c\n\tgcc -O2 -o bench bench.c\n"

// SeqRunCommand writes a script under a temporary folder that prints the
// values of seq in turn, one a call, cycling (its position kept in a
// counter file beside it), and returns the run command that passes the
// next value to ./bench.
func SeqRunCommand(tb testing.TB, seq []float64) string {
	tb.Helper()
	dir := tb.TempDir()
	vals := make([]string, len(seq))
	for i, v := range seq {
		vals[i] = fmt.Sprintf("%g", v)
	}
	script := fmt.Sprintf(`f=%s/counter
n=$(cat "$f" 2>/dev/null || echo 0)
echo $((n + 1)) > "$f"
set -- %s
shift $((n %% %d))
echo "$1"
`, dir, strings.Join(vals, " "), len(seq))
	p := filepath.Join(dir, "next.sh")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		tb.Fatal(err)
	}
	return "./bench $(sh " + p + ")"
}
