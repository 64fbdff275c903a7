package knobs

import (
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/testutil"
)

var goProgram = map[string]string{
	"go.mod": "module knobsprog\n\ngo 1.21\n",
	"main.go": `package main

import "os"

var sink int

//go:noinline
func hot(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		x := i&3 + 1
		for x > 0 {
			s += i >> uint(x)
			x--
		}
	}
	return s
}

//go:noinline
func cold(n int) int { return n*3 + 1 }

func main() { sink = hot(len(os.Args)*1000) + cold(len(os.Args)) }
`,
}

// goExtra adds a small function laid out before main.go's (a.go sorts
// first): it moves hot by 32 bytes.
var goExtra = map[string]string{
	"a.go": `package main

func init() { sink++ }
`,
}

func goBuildVariant(t *testing.T, v job.Variant, extra bool) *layout.Binary {
	t.Helper()
	files := map[string]string{}
	for k, s := range goProgram {
		files[k] = s
	}
	if extra {
		for k, s := range goExtra {
			files[k] = s
		}
	}
	env := map[string]string{"GOWORK": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "-buildvcs=false"}
	dir := buildIn(t, files, "go build -o prog .", env, v)
	return open(t, filepath.Join(dir, "prog"))
}

// TestGoKnobs: -ldflags=-funcalign=64 puts every function at 0 mod 64,
// -ldflags=-randlayout=SEED moves functions (differently for each seed),
// and the restore padding added by -overlay gives main.hot its old offset
// back after a function was added before it (issue 4, Go knobs).
func TestGoKnobs(t *testing.T) {
	testutil.NeedTool(t, "go")
	p, err := Lookup("go")
	if err != nil {
		t.Fatal(err)
	}
	plain := goBuildVariant(t, job.Variant{}, false)

	al := goBuildVariant(t, p.ForcedAlignment(), false)
	for _, name := range []string{"main.hot", "main.cold", "main.main", "runtime.main"} {
		if off := sym(t, al, name).Off(64); off != 0 {
			t.Errorf("funcalign=64 build: %s at %d mod 64, want 0", name, off)
		}
	}

	ls := p.TextLayouts(3)
	if len(ls) != 3 || ls[0].Name != "" {
		t.Fatalf("TextLayouts(3) = %v, want the plain build and 2 shuffles", ls)
	}
	addr := map[uint64]string{sym(t, plain, "main.hot").Addr: "plain"}
	for _, v := range ls[1:] {
		b := goBuildVariant(t, v, false)
		a := sym(t, b, "main.hot").Addr
		if prev, ok := addr[a]; ok {
			t.Errorf("%s: main.hot at %#x, as in %s: the shuffle did not move it", v.Name, a, prev)
		}
		addr[a] = v.Name
	}
	if got := p.DataLayouts(4); len(got) != 0 {
		t.Errorf("DataLayouts = %v, want none (the Go linker has no data knob)", got)
	}

	shifted := goBuildVariant(t, job.Variant{}, true)
	if sym(t, plain, "main.hot").Off(64) == sym(t, shifted, "main.hot").Off(64) {
		t.Fatalf("a.go did not move main.hot to another offset mod 64: the test program needs fixing")
	}
	pad, err := layout.ProposePadding(layout.Diff(plain, shifted, layout.DiffOptions{NoSource: true}), "main.hot")
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Restore(pad, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	restored := goBuildVariant(t, v, true)
	if got, want := sym(t, restored, "main.hot").Off(64), sym(t, plain, "main.hot").Off(64); got != want {
		t.Errorf("restored main.hot at %d mod 64, want the old %d", got, want)
	}
	if _, err := p.Restore(&layout.Padding{Symbol: "fmt.Println", Kind: layout.Func, Bytes: 32, Go: true}, t.TempDir()); err == nil {
		t.Error("Restore of a function outside package main succeeded")
	}
	if _, err := p.Restore(&layout.Padding{Symbol: "main.table", Kind: layout.Object, Bytes: 16, Go: true}, t.TempDir()); err == nil {
		t.Error("Restore of a Go data object succeeded")
	}
}
