package layout

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

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
// generators write (go test -run TestFuzzSeeds -update rewrites it after
// a change to them).
func TestFuzzSeeds(t *testing.T) {
	for name, data := range fuzzSeeds() {
		testutil.Golden(t, filepath.Join("testdata", "fuzz", "FuzzRead", name), seedFile(data))
	}
}

// FuzzRead: no input makes the reader, the diff or the padding proposal
// panic, and the trace of every diff holds together.
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
			checkTraceInvariants(t, d)
			for i := range d.Runs {
				_ = d.Runs[i].Bytes()
				for _, c := range d.Runs[i].Causes {
					_ = c.String()
				}
			}
			for k := range d.RootChanges {
				_ = d.RootChanges[k].String()
			}
		}
	})
}
