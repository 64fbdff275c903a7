package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/compare/stored"
	"github.com/perfbot/perfbot/internal/gitrev"
	metricpkg "github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
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

// BenchmarkCompareStored is issue 2's benchmark (a) on stored results:
// loading 2 commits x 20 runs x 10,000 metrics from the SQLite store,
// building the comparison and writing the 0-day table, as "perfbot
// compare" does after measuring.
func BenchmarkCompareStored(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(b.TempDir(), ".perfbot"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	rng := rand.New(rand.NewSource(1))
	commits := []string{strings.Repeat("a", 40), strings.Repeat("b", 40)}
	const metrics, runs = 10000, 20
	for r := 1; r <= runs; r++ {
		for c, h := range commits {
			rec := &store.RunRecord{RunKey: store.RunKey{Job: "bench", Commit: h, Index: r}, Status: store.RunOK, CPU: -1}
			for m := 0; m < metrics; m++ {
				v := 1000 * (1 + float64(m%97)/10) * math.Exp(rng.NormFloat64()*0.03)
				if c == 1 && m < metrics/10 {
					v *= 1.05
				}
				rec.Values = append(rec.Values, metricpkg.Value{Name: fmt.Sprintf("m%05d", m), Unit: "ns/op", Better: metricpkg.LowerIsBetter, Value: v})
			}
			if err := st.PutRun(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		all := func(r int) (int, bool) { return r, true }
		t, err := stored.Table(ctx, st, "bench", []stored.Source{
			{Commit: gitrev.Commit{Hash: commits[0]}, Round: all}, {Commit: gitrev.Commit{Hash: commits[1]}, Round: all}}, 0.05)
		if err != nil {
			b.Fatal(err)
		}
		if err := report.Write(io.Discard, t, report.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
