package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// TestCompareFilesNotGreen: result files that hold nothing to compare (an
// empty file, JSON of no known format, prose, benchmarks of different
// names or formats) are an error (exit 2) naming the file, never an empty
// table with exit 0, which a CI job would read as "no regression".
func TestCompareFilesNotGreen(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("old.txt", "goos: linux\nBenchmarkA-2   1000   120 ns/op\nBenchmarkA-2   1000   121 ns/op\nBenchmarkA-2   1000   119 ns/op\n")
	same := write("new.txt", "goos: linux\nBenchmarkA-2   1000   122 ns/op\nBenchmarkA-2   1000   120 ns/op\nBenchmarkA-2   1000   121 ns/op\n")
	other := write("other.txt", "goos: linux\nBenchmarkB-2   1000   120 ns/op\n")
	empty := write("empty.txt", "")
	hyperfine := write("hyperfine.json", `{"results": [{"command": "./bench", "mean": 0.12, "times": [0.12, 0.13]}]}`)
	unknown := write("report.json", `{"rows": [{"name": "A", "ns": 120}]}`)
	prose := write("notes.txt", "the benchmark got faster\n")

	for _, tc := range []struct {
		name   string
		files  []string
		reason string
	}{
		{"empty file", []string{good, empty}, "empty.txt: empty file"},
		{"JSON of no known format", []string{unknown, good}, "report.json: JSON of no known format"},
		{"hyperfine beside Go", []string{hyperfine, good}, "no benchmark of " + hyperfine + " appears in"},
		{"prose", []string{good, prose}, "notes.txt: no benchmark results"},
		{"no shared benchmark", []string{good, other}, "appears in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := perfbot(t, append([]string{"compare"}, tc.files...)...)
			if code != exitError || !strings.Contains(errOut, tc.reason) {
				t.Errorf("exit %d, stdout %q, stderr %q: want exit 2 and %q", code, out, errOut, tc.reason)
			}
		})
	}
	t.Run("comparable files", func(t *testing.T) {
		code, out, errOut := perfbot(t, "compare", "--all", good, same)
		if code != 0 || !strings.Contains(out, "A-2") {
			t.Errorf("exit %d, stdout %q, stderr %q: want exit 0 and a table", code, out, errOut)
		}
	})
}

// filesDir holds real captured result files (internal/compare/testdata/files/README).
var filesDir = filepath.Join("..", "..", "internal", "compare", "testdata", "files")

// TestCompareFilesFormatsCLI: every format's planted slowdown is exit 1,
// Go rows print in ns/op (not 0.00) and keep their package, and - reads
// standard input.
func TestCompareFilesFormatsCLI(t *testing.T) {
	for _, f := range []string{"go", "gbench", "hyperfine", "pytest"} {
		ext := ".json"
		if f == "go" {
			ext = ".txt"
		}
		code, out, errOut := perfbot(t, "compare", filepath.Join(filesDir, f+"-old"+ext), filepath.Join(filesDir, f+"-new"+ext))
		if code != exitRegression {
			t.Errorf("%s: exit %d, want 1 (a planted slowdown)\n%s%s", f, code, out, errOut)
		}
	}
	code, out, errOut := perfbot(t, "compare", "--all", "--filter", ".name:Encode .unit:ns/op",
		filepath.Join(filesDir, "go-old.txt"), filepath.Join(filesDir, "go-new.txt"))
	for _, want := range []string{"example.com/gob/a:Encode-2.ns/op", "example.com/gob/b:Encode-2.ns/op"} {
		if !strings.Contains(out, want) {
			t.Errorf("exit %d: no row %s in\n%s%s", code, want, out, errOut)
		}
	}
	if strings.Contains(out, " 0.00 ") || strings.Contains(out, "Speed") || strings.Contains(out, "B/op") {
		t.Errorf("--filter kept other rows, or values print as 0.00:\n%s", out)
	}

	// Standard input as the base.
	in, err := os.Open(filepath.Join(filesDir, "go-old.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	saved := os.Stdin
	os.Stdin = in
	code, out, errOut = perfbot(t, "compare", "-f", "csv", "-", filepath.Join(filesDir, "go-new.txt"))
	os.Stdin = saved
	if code != exitRegression || !strings.Contains(out, "example.com/gob/a:Encode-2.ns/op") {
		t.Errorf("stdin: exit %d\n%s%s", code, out, errOut)
	}
}

// TestCompareFilesBMF: -f bmf is Bencher's document, the head's figures
// and perfbot's decision beside them.
func TestCompareFilesBMF(t *testing.T) {
	code, out, errOut := perfbot(t, "compare", "-f", "bmf", filepath.Join(filesDir, "gbench-old.json"), filepath.Join(filesDir, "gbench-new.json"))
	if code != exitRegression {
		t.Fatalf("exit %d, want 1\n%s", code, errOut)
	}
	schematest.ValidateJSON(t, "bmf", []byte(out))
	var doc map[string]map[string]map[string]float64
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	b := doc["BM_copy/4096.cpu_time"]
	if lat := b["latency"]; !(lat["lower_value"] <= lat["value"] && lat["value"] <= lat["upper_value"] && lat["value"] > 0) {
		t.Errorf("latency %v", lat)
	}
	if b["latency-regression"]["value"] != 1 || b["latency-change-pct"]["lower_value"] <= 0 {
		t.Errorf("planted 8x copy: %v", b)
	}
}
