package layout

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz/FuzzRead from the generators")

// fuzzSeeds are the checked-in seed inputs of FuzzRead, by file name.
func fuzzSeeds() map[string][]byte {
	small := smallELF().bytes()
	return map[string][]byte{
		"small-elf":           small,
		"small-elf-truncated": small[:len(small)/2],
		"system-map":          []byte(sysMapA),
		"nm-sizes":            []byte("0000000000401000 0000000000000020 T main\n0000000000404000 0000000000000008 B counter\n                 U puts\n"),
	}
}

func seedFile(data []byte) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", data)
}

// TestFuzzSeeds keeps the checked-in seed corpus equal to what the
// generators write (run with -update-seeds after changing them).
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzRead")
	for name, data := range fuzzSeeds() {
		p := filepath.Join(dir, name)
		want := seedFile(data)
		if *updateSeeds {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run go test -run TestFuzzSeeds -update-seeds)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale (run go test -run TestFuzzSeeds -update-seeds)", p)
		}
	}
}

// FuzzRead: no input makes the reader, the diff or the padding proposal
// panic.
func FuzzRead(f *testing.F) {
	other, err := Read(bytes.NewReader(smallELF().bytes()), int64(len(smallELF().bytes())))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if err.Error() == "" {
				t.Error("empty error message")
			}
			return
		}
		for _, d := range []*DiffResult{Diff(b, b, DiffOptions{}), Diff(other, b, DiffOptions{Symbols: []string{"f"}})} {
			_, _ = ProposePadding(d, "")
			for i := range d.Runs {
				_ = d.Runs[i].Bytes()
				for _, c := range d.Runs[i].Causes {
					_ = c.String()
				}
			}
		}
	})
}
