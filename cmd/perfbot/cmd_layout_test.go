package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// layoutDataSrc is the seed report's case: a 16-byte static key before two
// hot arrays in .bss, present only with -DWITH_KEY.
const layoutDataSrc = `
struct static_key { long enabled; void *entries; };
struct static_key switch_mm_always_ibpb;
#ifdef WITH_KEY
struct static_key mds_user_clear;
#endif
struct static_key mds_idle_clear;
float x[4096];
float y[4096];
int main(int argc, char **argv) {
	float a = argc;
	for (int i = 0; i < 4096; i++)
		y[i] += a * x[i];
	return (int)y[argc] + (int)mds_idle_clear.enabled;
}
`

// layoutLoopSrc has a short inner loop; -DPAD adds a function before it.
const layoutLoopSrc = `
unsigned arr[4096];
#ifdef PAD
__attribute__((noinline)) int pad_fn(int x) { return x * 3 + 1; }
#endif
__attribute__((noinline)) unsigned long hot(const unsigned *v, int n) {
	unsigned long s = 0;
	for (int i = 0; i < n; i++) {
		unsigned x = (i & 3) + 1, w = v[i];
		do { s += w; w >>= 1; } while (--x);
	}
	return s;
}
int main(int argc, char **argv) {
	unsigned long s = 0;
	for (int i = 0; i < 4096; i++) arr[i] = i * 2654435761u;
	s += hot(arr, 4096);
#ifdef PAD
	s += pad_fn(argc);
#endif
	return (int)s & 1;
}
`

var layoutDataFlags = []string{"-O2", "-fno-toplevel-reorder", "-malign-data=abi"}

func layoutRun(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// layoutBuild compiles src (as name.c in dir) into dir/name.
func layoutBuild(t *testing.T, dir, name, src string, flags ...string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name+".c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	layoutRun(t, dir, "gcc", append(append([]string{}, flags...), "-o", name, name+".c")...)
	return filepath.Join(dir, name)
}

// layoutNM returns the address nm gives the one symbol called sym.
func layoutNM(t *testing.T, path, sym string) uint64 {
	t.Helper()
	var found []uint64
	for _, line := range strings.Split(layoutRun(t, filepath.Dir(path), "nm", "--defined-only", path), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[2] == sym {
			a, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			found = append(found, a)
		}
	}
	if len(found) != 1 {
		t.Fatalf("nm %s: %d symbols called %s", path, len(found), sym)
	}
	return found[0]
}

// layoutPerfbot runs perfbot with args and returns exit code, stdout, stderr.
func layoutPerfbot(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), &out, &errb, args)
	return code, out.String(), errb.String()
}

// TestLayoutDiffSeedCase is issue 3's done-when case end to end: two gcc
// builds differing only by one removed global before a hot array; the
// report names that global as the cause and the array's old and new
// offsets mod 64 (checked against nm), in text and JSON; --pad writes an
// assembler file that, linked first, restores the old offset.
func TestLayoutDiffSeedCase(t *testing.T) {
	testutil.NeedTool(t, "gcc", "nm")
	dir := t.TempDir()
	a := layoutBuild(t, dir, "a", layoutDataSrc, append([]string{"-DWITH_KEY"}, layoutDataFlags...)...)
	b := layoutBuild(t, dir, "b", layoutDataSrc, layoutDataFlags...)
	xa, xb := layoutNM(t, a, "x"), layoutNM(t, b, "x")

	code, out, errs := layoutPerfbot("layout", "diff", a, b)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"removed mds_user_clear (16 bytes)",
		"x  .bss object",
		fmt.Sprintf("%#x -> %#x (shift %+d): offset mod 64 %d -> %d", xa, xb, int64(xb-xa), xa%64, xb%64),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if i, j := strings.Index(out, "removed mds_user_clear"), strings.Index(out, "Most likely to matter"); i < 0 || i > j {
		t.Errorf("the shift run's cause is not printed before the ranked changes:\n%s", out)
	}

	code, out, errs = layoutPerfbot("layout", "diff", "--format", "json", a, b)
	if code != exitOK {
		t.Fatalf("json: exit %d: %s", code, errs)
	}
	schematest.ValidateJSON(t, "layout", []byte(out))
	var js struct {
		Runs []struct {
			First  string
			Causes []struct{ Kind, Symbol string }
		}
		Changes []struct {
			Name string
			A, B struct{ Off64 uint64 }
		}
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	ok := false
	for _, c := range js.Changes {
		if c.Name == "x" {
			ok = c.A.Off64 == xa%64 && c.B.Off64 == xb%64
		}
	}
	if !ok {
		t.Errorf("json: x's offsets mod 64 are not %d -> %d: %+v", xa%64, xb%64, js.Changes)
	}
	cause := false
	for _, r := range js.Runs {
		for _, c := range r.Causes {
			cause = cause || c.Kind == "removed" && c.Symbol == "mds_user_clear"
		}
	}
	if !cause {
		t.Errorf("json: no run caused by removing mds_user_clear: %+v", js.Runs)
	}

	padDir := filepath.Join(dir, "pad")
	code, out, errs = layoutPerfbot("layout", "diff", "--pad", "x", "--pad-out", padDir, a, b)
	if code != exitOK {
		t.Fatalf("--pad: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "Padding to restore x:") || !strings.Contains(errs, "perfbot-pad.s") {
		t.Errorf("--pad output:\n%s\nstderr:\n%s", out, errs)
	}
	layoutRun(t, dir, "gcc", "-c", filepath.Join(padDir, "perfbot-pad.s"), "-o", "pad.o")
	layoutRun(t, dir, "gcc", append(append([]string{"-c"}, layoutDataFlags...), "b.c", "-o", "b.o")...)
	layoutRun(t, dir, "gcc", "pad.o", "b.o", "-o", "b_padded")
	if got := layoutNM(t, filepath.Join(dir, "b_padded"), "x") % 64; got != xa%64 {
		t.Errorf("padded build puts x at %d mod 64, want %d", got, xa%64)
	}
}

// TestLayoutDiffLoop: the hot inner loop moved inside its line; --symbol
// prints it with both offsets, as objdump places it.
func TestLayoutDiffLoop(t *testing.T) {
	testutil.NeedTool(t, "gcc", "objdump")
	dir := t.TempDir()
	a := layoutBuild(t, dir, "a", layoutLoopSrc, "-O2")
	b := layoutBuild(t, dir, "b", layoutLoopSrc, "-O2", "-DPAD")
	la, lb := layoutObjdumpInnerLoop(t, a, "hot"), layoutObjdumpInnerLoop(t, b, "hot")
	if la%64 == lb%64 {
		t.Fatalf("fixture: the inner loop is at %d mod 64 in both builds", la%64)
	}
	code, out, errs := layoutPerfbot("layout", "diff", "--symbol", "hot", a, b)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "(inner, ") && strings.Contains(l, fmt.Sprintf("%#x -> %#x", la, lb)) {
			line = l
		}
	}
	if line == "" || !strings.Contains(line, fmt.Sprintf("line offset %d -> %d", la%64, lb%64)) {
		t.Errorf("no inner loop line with %#x -> %#x, line offset %d -> %d:\n%s", la, lb, la%64, lb%64, out)
	}
	if !strings.Contains(out, "Symbol hot:") {
		t.Errorf("--symbol hot not shown first:\n%s", out)
	}

	// With a profile naming hot, it ranks first.
	prof := filepath.Join(dir, "hot.folded")
	if err := os.WriteFile(prof, []byte("b;main;hot 95\nb;main 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = layoutPerfbot("layout", "diff", "--profile", prof, "--top", "1", a, b)
	if code != exitOK || !strings.Contains(out, "1. hot  .text func, 95.0% of profile") {
		t.Errorf("--profile: exit %d, stderr %s, out:\n%s", code, errs, out)
	}
}

// layoutObjdumpInnerLoop returns the start of fn's shortest backward-branch
// span as objdump disassembles it.
func layoutObjdumpInnerLoop(t *testing.T, path, fn string) uint64 {
	t.Helper()
	out := layoutRun(t, filepath.Dir(path), "objdump", "-d", "--no-show-raw-insn", path)
	in := false
	best, bestLen := uint64(0), uint64(1<<62)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, "<"+fn+">:") {
			in = true
			continue
		}
		if !in {
			continue
		}
		if strings.TrimSpace(line) == "" {
			break
		}
		colon := strings.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		at, err := strconv.ParseUint(strings.TrimSpace(line[:colon]), 16, 64)
		f := strings.Fields(line[colon+1:])
		if err != nil || len(f) < 2 || !strings.HasPrefix(f[0], "j") {
			continue
		}
		if target, err := strconv.ParseUint(f[1], 16, 64); err == nil && target <= at && at-target < bestLen {
			best, bestLen = target, at-target
		}
	}
	if bestLen == 1<<62 {
		t.Fatalf("objdump: no backward branch in %s", fn)
	}
	return best
}

// TestLayoutDiffErrors: bad input exits 2 with a message naming the file.
func TestLayoutDiffErrors(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notELF, []byte("just some text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "System.map")
	if err := os.WriteFile(m, []byte("ffffffff81000000 T _stext\nffffffff81000040 T f\nffffffff81000080 T _etext\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"layout", "diff", notELF, m}, "reading A: " + notELF + ": not an ELF file"},
		{[]string{"layout", "diff", m, filepath.Join(dir, "missing")}, "reading B: open " + filepath.Join(dir, "missing")},
		{[]string{"layout", "diff", "--format", "xml", m, m}, `unknown format "xml" (valid: text, json)`},
		{[]string{"layout", "diff", "--pad-out", dir, m, m}, "--pad-out needs --pad"},
		{[]string{"layout", "diff", "--pad", "f", m, m}, "f is at offset 0 mod 64 in both builds"},
		{[]string{"layout", "diff", "--profile", filepath.Join(dir, "nope"), m, m}, "profile"},
		{[]string{"layout", "diff", m}, "accepts between 2 and 3 arg(s)"},
	} {
		code, _, errs := layoutPerfbot(tc.args...)
		if code != exitError || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args[2:], code, errs, tc.want)
		}
	}
	// A symbol map against itself is fine.
	if code, out, errs := layoutPerfbot("layout", "diff", m, m); code != exitOK || !strings.Contains(out, "No symbol changed") {
		t.Errorf("map vs itself: exit %d %s\n%s", code, errs, out)
	}
}

// TestLayoutShiftsRenamed: layout diff's --shifts is the number of shift
// runs printed; --runs, its old name, still works, hidden from the help,
// with a warning on stderr (stdout is the report's alone).
func TestLayoutShiftsRenamed(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	dir := t.TempDir()
	a := layoutBuild(t, dir, "a", layoutDataSrc, append([]string{"-DWITH_KEY"}, layoutDataFlags...)...)
	b := layoutBuild(t, dir, "b", layoutDataSrc, layoutDataFlags...)
	code, out, stderr := runPerfbot("layout", "diff", a, b, "--shifts", "1")
	if code != exitOK || !strings.Contains(out, "shift run") {
		t.Fatalf("layout diff --shifts 1: exit %d, stderr %q", code, stderr)
	}
	if code, out2, stderr := runPerfbot("layout", "diff", a, b, "--runs", "1"); code != exitOK || out2 != out ||
		!strings.Contains(stderr, "--runs is deprecated: use --shifts") {
		t.Errorf("layout diff --runs 1: exit %d, stdout %q, stderr %q; want the report of --shifts 1", code, out2[:min(len(out2), 200)], stderr)
	}
	_, help, _ := runPerfbot("layout", "diff", "--help")
	if !strings.Contains(help, "--shifts") || strings.Contains(help, "--runs") {
		t.Errorf("layout diff --help lists --runs, or not --shifts:\n%s", help)
	}
}
