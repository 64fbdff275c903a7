package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareFilesNotGreen: Go benchmark files that hold nothing to compare
// (an empty file, another tool's JSON, benchmarks of different names) are
// an error (exit 2), never an empty table with exit 0, which a CI job would
// read as "no regression".
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
	prose := write("notes.txt", "the benchmark got faster\n")

	for _, tc := range []struct {
		name   string
		files  []string
		reason string
	}{
		{"empty file", []string{good, empty}, "empty.txt: empty"},
		{"hyperfine JSON", []string{hyperfine, good}, "the file is JSON"},
		{"prose", []string{good, prose}, "notes.txt: no Go benchmark results"},
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
