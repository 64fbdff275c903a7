package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkCompareFiles is issue 2's benchmark (a) on Go benchmark files:
// "perfbot compare old.txt new.txt" on 2 files x 20 runs x 10,000
// benchmarks, the data benchstat takes about 4 s for. See docs/benchmarks.md.
func BenchmarkCompareFiles(b *testing.B) {
	dir := b.TempDir()
	gen := exec.Command("go", "run", "../../tools/benchgen", "-n", "10000", "-runs", "20", "-dir", dir)
	if out, err := gen.CombinedOutput(); err != nil {
		b.Fatalf("benchgen: %v\n%s", err, out)
	}
	for _, format := range []string{"ncompare", "benchstat"} {
		b.Run(format, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				code := run(context.Background(), io.Discard, io.Discard,
					[]string{"compare", "--format", format, filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt")})
				if code == exitError {
					b.Fatal("compare failed")
				}
			}
		})
	}
	_ = os.RemoveAll(dir)
}
