package metric

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

func TestReadGoBench(t *testing.T) {
	tests := []struct {
		desc     string
		in       string
		want     []Series
		warnings []string
	}{
		{
			desc: "configs, sub-benchmarks and units",
			in: `goos: linux
pkg: example.com/a
BenchmarkPut/size=10-8 100 1200 ns/op 64 B/op
BenchmarkPut/size=20-8 100 2400 ns/op 64 B/op
BenchmarkPut/size=10-8 100 1100 ns/op 64 B/op
pkg: example.com/b
BenchmarkPut/size=10-8 100 900 ns/op 10.5 MB/s
Unit B/op better=higher
`,
			want: []Series{
				{"goos=linux pkg=example.com/a", "Put/size=10-8", "sec/op", LowerIsBetter, []float64{ns(1200), ns(1100)}},
				{"goos=linux pkg=example.com/a", "Put/size=10-8", "B/op", HigherIsBetter, []float64{64, 64}},
				{"goos=linux pkg=example.com/a", "Put/size=20-8", "sec/op", LowerIsBetter, []float64{ns(2400)}},
				{"goos=linux pkg=example.com/a", "Put/size=20-8", "B/op", HigherIsBetter, []float64{64}},
				{"goos=linux pkg=example.com/b", "Put/size=10-8", "sec/op", LowerIsBetter, []float64{ns(900)}},
				{"goos=linux pkg=example.com/b", "Put/size=10-8", "B/s", HigherIsBetter, []float64{10.5e6}},
			},
		},
		{
			desc: "a blank config value removes the key",
			in:   "cpu: x\nBenchmarkA 1 1 ns/op\ncpu:\nBenchmarkA 1 2 ns/op\n",
			want: []Series{
				{"cpu=x", "A", "sec/op", LowerIsBetter, []float64{ns(1)}},
				{"", "A", "sec/op", LowerIsBetter, []float64{ns(2)}},
			},
		},
		{
			desc: "malformed lines warn and reading goes on",
			in: `BenchmarkA 1 5 ns/op
BenchmarkA x 5 ns/op
BenchmarkA 1 5
BenchmarkA 1 +Inf ns/op
Unit ns/op
Unit ns/op better
BenchmarkA 1 6 ns/op
`,
			want: []Series{{"", "A", "sec/op", LowerIsBetter, []float64{ns(5), ns(6)}}},
			warnings: []string{
				"old.txt:2: parsing iteration count: invalid syntax",
				"old.txt:3: missing units",
				"old.txt:4: BenchmarkA: value +Inf ns/op is not finite",
				"old.txt:6: expected key=value",
			},
		},
		{
			desc: "zero values are tidied too",
			in:   "BenchmarkA 1 0 ns/op 0 MB/s\nBenchmarkA 1 3 ns/op 2 MB/s\n",
			want: []Series{
				{"", "A", "sec/op", LowerIsBetter, []float64{0, ns(3)}},
				{"", "A", "B/s", HigherIsBetter, []float64{0, 2e6}},
			},
		},
		{desc: "empty", in: "", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			bf, err := ReadGoBench(strings.NewReader(tt.in), "old.txt")
			if err != nil {
				t.Fatal(err)
			}
			var got []Series
			for _, s := range bf.Series {
				got = append(got, *s)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("series =\n%+v\nwant\n%+v", got, tt.want)
			}
			var warnings []string
			for _, w := range bf.Warnings {
				var se *benchfmt.SyntaxError
				if !errors.As(w, &se) {
					t.Errorf("warning %v is %T, want *benchfmt.SyntaxError", w, w)
				}
				warnings = append(warnings, w.Error())
			}
			if !reflect.DeepEqual(warnings, tt.warnings) {
				t.Errorf("warnings =\n%q\nwant\n%q", warnings, tt.warnings)
			}
		})
	}
}

func TestReadGoBenchFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.txt")
	if err := os.WriteFile(path, []byte("BenchmarkA-4 10 3 ns/op\nBenchmark bad\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	bf, err := ReadGoBenchFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bf.Name != path || len(bf.Series) != 1 || bf.Series[0].Name != "A-4" {
		t.Fatalf("ReadGoBenchFile = %+v", bf)
	}
	if len(bf.Warnings) != 1 || bf.Warnings[0].Error() != path+":2: parsing iteration count: invalid syntax" {
		t.Fatalf("warnings = %v", bf.Warnings)
	}
	if _, err := ReadGoBenchFile(filepath.Join(t.TempDir(), "none.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadGoBenchFile(missing) error = %v, want ErrNotExist", err)
	}
}

// writeBigBenchFile writes nBench benchmarks with nLines result lines each,
// the way go test -count prints them (all lines of a benchmark together),
// and returns the path.
func writeBigBenchFile(b testing.TB, nBench, nLines int) string {
	path := filepath.Join(b.TempDir(), "big.txt")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "goos: linux\ngoarch: amd64\npkg: example.com/big\ncpu: Test CPU @ 3.00GHz\n")
	for i := range nBench {
		for j := range nLines {
			fmt.Fprintf(w, "BenchmarkCase%d/size=%d-8 \t 1000000\t %d ns/op\t %d B/op\t %d allocs/op\n",
				i/10, i%10, 1000+i+j, 64, 2)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkReadGoBenchFile reads 10,000 benchmarks x 20 lines (200,000
// result lines, 600,000 values).
func BenchmarkReadGoBenchFile(b *testing.B) {
	path := writeBigBenchFile(b, 10000, 20)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ResetTimer()
	for b.Loop() {
		bf, err := ReadGoBenchFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if len(bf.Series) != 30000 || len(bf.Series[0].Values) != 20 {
			b.Fatalf("got %d series", len(bf.Series))
		}
	}
}

func TestIsBuiltin(t *testing.T) {
	for name, want := range map[string]bool{"time.elapsed_time": true, "time.maximum_resident_set_size": true, "wall": false, "text_ms": false, "": false} {
		if got := IsBuiltin(name); got != want {
			t.Errorf("IsBuiltin(%q) = %v, want %v", name, got, want)
		}
	}
}
