package layout

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

const goMain = `package main

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

func main() { sink = hot(len(os.Args) * 1000) }
`

// goPad is a padding function kept alive from init; in a.go it is
// compiled, and laid out, before main.go's functions.
const goPad = `package main

//go:noinline
func aaaPad(x int) int { return x*7 + 3 + x*x*x + x>>3 }

func init() { sink += aaaPad(sink) }
`

// goBuild builds the module in dir into out with extra go build args.
func goBuild(t *testing.T, dir, out string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", append(append([]string{"build", "-o", out}, args...), ".")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
}

// TestGoBinaryPaddingFunction builds a Go program twice, the second time
// with a padding function before the hot one.
func TestGoBinaryPaddingFunction(t *testing.T) {
	testutil.NeedTool(t, "go", "nm")
	dir := t.TempDir()
	mod := filepath.Join(dir, "mod")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module padtest\n\ngo 1.22\n")
	write("main.go", goMain)
	pa, pb, ps := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "stripped")
	goBuild(t, mod, pa)
	goBuild(t, mod, ps, "-ldflags=-s -w")
	write("a.go", goPad)
	goBuild(t, mod, pb)

	a, b := mustOpen(t, pa), mustOpen(t, pb)
	if !a.Go || !b.Go {
		t.Errorf("Go binaries not recognised: %s / %s", a.Describe(), b.Describe())
	}
	d := Diff(a, b, DiffOptions{Symbols: []string{"main.hot"}})
	c := changeOf(t, d, "main.hot")
	nmA, nmB := nmAddrs(t, pa), nmAddrs(t, pb)
	wa, wb := nm1(t, nmA, "main.hot"), nm1(t, nmB, "main.hot")
	if c.A.Addr != wa || c.B.Addr != wb || c.Shift() != int64(wb-wa) || c.Shift() <= 0 {
		t.Fatalf("main.hot %#x -> %#x (shift %d), nm %#x -> %#x", c.A.Addr, c.B.Addr, c.Shift(), wa, wb)
	}
	if !hasCause(&d.Runs[c.Run], Added, "main.aaaPad") {
		t.Errorf("run holding main.hot: causes %v, want added main.aaaPad", d.Runs[c.Run].Causes)
	}
	inner := 0
	for _, l := range c.Loops {
		if l.Inner() && l.A != nil && l.B != nil {
			inner++
			if l.A.Start-c.A.Addr != l.B.Start-c.B.Addr {
				t.Errorf("loop %d at +%#x in A, +%#x in B: same code should keep its offset", l.Index, l.A.FuncOff, l.B.FuncOff)
			}
		}
	}
	if inner == 0 {
		t.Errorf("main.hot: no inner loop found (%s)", c.LoopsNote)
	}
	if m := changeOf(t, d, "main.main"); m.Analysed && len(m.Loops) > 0 {
		t.Errorf("main.main has no loop, got %d (the stack-growth jump back to the entry is not a loop)", len(m.Loops))
	}

	_, err := Open(ps)
	if !errors.Is(err, ErrStripped) || !strings.Contains(err.Error(), "rebuild without -s") || !strings.Contains(err.Error(), ps) {
		t.Errorf("stripped Go binary: %v", err)
	}
}

// TestGoArm64 reads an arm64 Go binary: symbols and offsets work, loops
// are said to be unsupported rather than guessed.
func TestGoArm64(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: cross-building the Go runtime for arm64 takes several seconds on a cold cache")
	}
	testutil.NeedTool(t, "go", "nm")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module arm\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(goMain), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "arm")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	b := mustOpen(t, out)
	if b.Arch != "aarch64" || !b.Go {
		t.Errorf("%s", b.Describe())
	}
	hot := b.Lookup("main.hot")
	if len(hot) != 1 || hot[0].Addr != nm1(t, nmAddrs(t, out), "main.hot") {
		t.Fatalf("main.hot: %v", hot)
	}
	d := Diff(b, b, DiffOptions{Symbols: []string{"main.hot"}})
	if !strings.Contains(strings.Join(d.Notes, "\n"), "not supported yet") {
		t.Errorf("notes %q do not say loops are unsupported", d.Notes)
	}
	if c := changeOf(t, d, "main.hot"); len(c.Loops) != 0 {
		t.Errorf("arm64 loops %v", c.Loops)
	}
}
