// Command benchgen writes two Go benchmark result files with known truth,
// for measuring "perfbot compare old.txt new.txt" against benchstat on the
// same data (docs/benchmarks.md):
//
//	go run ./tools/benchgen -n 10000 -runs 20 -dir /tmp/bg
//
// Every benchmark has log-normal noise (CV -cv); the first -changed
// fraction of them is slower by -effect in new.txt.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand"
	"os"
	"path/filepath"
)

func main() {
	n := flag.Int("n", 10000, "benchmarks per file")
	runs := flag.Int("runs", 20, "result lines per benchmark")
	cv := flag.Float64("cv", 0.03, "noise, as a coefficient of variation")
	changed := flag.Float64("changed", 0.1, "fraction of benchmarks that change")
	effect := flag.Float64("effect", 0.05, "relative slowdown of the changed ones")
	dir := flag.String("dir", ".", "where to write old.txt and new.txt")
	seed := flag.Int64("seed", 1, "random seed")
	flag.Parse()
	rng := rand.New(rand.NewSource(*seed))
	for _, name := range []string{"old.txt", "new.txt"} {
		f, err := os.Create(filepath.Join(*dir, name))
		if err != nil {
			log.Fatal(err)
		}
		w := bufio.NewWriter(f)
		fmt.Fprintf(w, "goos: linux\ngoarch: amd64\npkg: example.com/gen\n")
		for r := 0; r < *runs; r++ {
			for i := 0; i < *n; i++ {
				v := 1000 * (1 + float64(i%97)/10)
				if name == "new.txt" && float64(i) < *changed*float64(*n) {
					v *= 1 + *effect
				}
				v *= math.Exp(rng.NormFloat64() * *cv)
				fmt.Fprintf(w, "BenchmarkGen%05d-2 \t 1000000\t %.2f ns/op\n", i, v)
			}
		}
		if err := w.Flush(); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}
