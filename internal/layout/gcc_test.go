package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/profile"
	"github.com/perfbot/perfbot/internal/testutil"
)

// dataSrc is the seed report's case in small: static keys in .bss before
// two hot float arrays; build A has mds_user_clear, build B does not.
const dataSrc = `
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
	for (int r = 0; r < 100; r++)
		for (int i = 0; i < 4096; i++)
			y[i] += a * x[i];
	return (int)y[argc] + (int)mds_idle_clear.enabled;
}
`

// dataFlags keep gcc from reordering globals or rounding big arrays up to
// 32 bytes, as the alignment notes require.
var dataFlags = []string{"-O2", "-fno-toplevel-reorder", "-malign-data=abi"}

// loopSrc has the short variable-trip inner loop whose position in its
// 64-byte line mattered on the project's machines; -DPAD adds a function
// before it.
const loopSrc = `
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
	for (int r = 0; r < 10; r++) s += hot(arr, 4096);
#ifdef PAD
	s += pad_fn(argc);
#endif
	return (int)s & 1;
}
`

// TestDataShiftCause is issue 3's done-when case: two builds that differ
// only by one removed global before a hot array; the diff names that global
// as the cause and the array's old and new offsets mod 64, as nm sees them.
func TestDataShiftCause(t *testing.T) {
	testutil.NeedTool(t, "gcc", "nm")
	dir := t.TempDir()
	pa := gccBuild(t, dir, "a", dataSrc, append([]string{"-DWITH_KEY"}, dataFlags...)...)
	pb := gccBuild(t, dir, "b", dataSrc, dataFlags...)
	d := Diff(mustOpen(t, pa), mustOpen(t, pb), DiffOptions{})

	nmA, nmB := nmAddrs(t, pa), nmAddrs(t, pb)
	for _, name := range []string{"x", "y", "mds_idle_clear", "switch_mm_always_ibpb"} {
		c := changeOf(t, d, name)
		wa, wb := nm1(t, nmA, name), nm1(t, nmB, name)
		if c.A.Addr != wa || c.B.Addr != wb {
			t.Errorf("%s: addresses %#x -> %#x, nm says %#x -> %#x", name, c.A.Addr, c.B.Addr, wa, wb)
		}
		if c.Shift() != int64(wb-wa) || c.A.Off(64) != wa%64 || c.B.Off(64) != wb%64 {
			t.Errorf("%s: shift %d, off64 %d -> %d; nm: shift %d, off64 %d -> %d",
				name, c.Shift(), c.A.Off(64), c.B.Off(64), int64(wb-wa), wa%64, wb%64)
		}
	}
	x := changeOf(t, d, "x")
	if x.Shift() != -16 {
		t.Fatalf("x shifted %d, want -16 (the removed 16-byte key)", x.Shift())
	}
	if x.Run < 0 {
		t.Fatal("x is in no shift run")
	}
	r := &d.Runs[x.Run]
	if !hasCause(r, Removed, "mds_user_clear") {
		t.Errorf("run holding x (from %s, shift %d) has causes %v, want removed mds_user_clear", r.First.Name(), r.Shift, r.Causes)
	}
	if r.First.Name() != "mds_idle_clear" || r.Prev == nil || r.Prev.Name != "switch_mm_always_ibpb" {
		t.Errorf("run starts at %s after %v, want mds_idle_clear after switch_mm_always_ibpb", r.First.Name(), r.Prev)
	}
	// The 16 KiB array at 16 mod 64 touches 257 lines, at 0 mod 64 256.
	if x.A.Lines() != 257 || x.B.Lines() != 256 || !x.A.Straddles() || x.B.Straddles() {
		t.Errorf("x lines %d -> %d, straddles %v -> %v; want 257 -> 256, true -> false",
			x.A.Lines(), x.B.Lines(), x.A.Straddles(), x.B.Straddles())
	}
	if len(d.Removed) != 1 || d.Removed[0].Name != "mds_user_clear" {
		t.Errorf("removed %v, want only mds_user_clear", names(d.Removed))
	}
	// Without a profile, the arrays whose line count changed rank first.
	if len(d.Ranked) == 0 || (d.Ranked[0].Name() != "x" && d.Ranked[0].Name() != "y") {
		t.Errorf("top-ranked change is %v, want x or y", d.Ranked)
	}
	if d.Ranking != "alignment" {
		t.Errorf("ranking %q without a profile", d.Ranking)
	}
}

func names(ss []*Symbol) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// TestDataPaddingRestoresOffset links the proposed padding object before
// build B's object and checks with nm that the hot array is back at its
// old offset mod 64, as the seed's debug patch restored it.
func TestDataPaddingRestoresOffset(t *testing.T) {
	testutil.NeedTool(t, "gcc", "nm")
	dir := t.TempDir()
	pa := gccBuild(t, dir, "a", dataSrc, append([]string{"-DWITH_KEY"}, dataFlags...)...)
	pb := gccBuild(t, dir, "b", dataSrc, dataFlags...)
	d := Diff(mustOpen(t, pa), mustOpen(t, pb), DiffOptions{})
	p, err := ProposePadding(d, "x")
	if err != nil {
		t.Fatal(err)
	}
	if p.Section != ".bss" || p.Bytes != 16 || p.Before.Name != "mds_idle_clear" || p.After == nil || p.After.Name != "switch_mm_always_ibpb" {
		t.Errorf("padding %d bytes in %s before %s after %v; want 16 in .bss before mds_idle_clear after switch_mm_always_ibpb",
			p.Bytes, p.Section, p.Before.Name, p.After)
	}
	checkPaddingBuild(t, dir, p, dataFlags, "x", nmAddrs(t, pa))
}

// checkPaddingBuild assembles p, links it before b.c's object (built with
// flags) and checks that sym is at its offset mod 64 from build A.
func checkPaddingBuild(t *testing.T, dir string, p *Padding, flags []string, sym string, nmA map[string][]uint64) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "pad.s"), []byte(p.Asm()), 0o644); err != nil {
		t.Fatal(err)
	}
	runCmd(t, dir, "gcc", "-c", "pad.s", "-o", "pad.o")
	runCmd(t, dir, "gcc", append(append([]string{"-c"}, flags...), "b.c", "-o", "b.o")...)
	runCmd(t, dir, "gcc", append(p.LinkerArgs("pad.o"), "b.o", "-o", "b_padded")...)
	nmP := nmAddrs(t, filepath.Join(dir, "b_padded"))
	want := nm1(t, nmA, sym) % 64
	got := nm1(t, nmP, sym) % 64
	if got != want {
		t.Errorf("%s with padding at %d mod 64, want %d (A's)\npadding file:\n%s", sym, got, want, p.Asm())
	}
	if _, ok := nmP[p.Label()]; !ok {
		t.Errorf("padded build has no %s symbol", p.Label())
	}
}

// TestTextShiftAddedFunction adds a function before a hot one.
func TestTextShiftAddedFunction(t *testing.T) {
	testutil.NeedTool(t, "gcc", "nm")
	dir := t.TempDir()
	pa := gccBuild(t, dir, "a", loopSrc, "-O2")
	pb := gccBuild(t, dir, "b", loopSrc, "-O2", "-DPAD")
	d := Diff(mustOpen(t, pa), mustOpen(t, pb), DiffOptions{})
	nmA, nmB := nmAddrs(t, pa), nmAddrs(t, pb)
	c := changeOf(t, d, "hot")
	wa, wb := nm1(t, nmA, "hot"), nm1(t, nmB, "hot")
	if c.A.Addr != wa || c.B.Addr != wb || c.Shift() != int64(wb-wa) {
		t.Fatalf("hot %#x -> %#x (shift %d), nm says %#x -> %#x", c.A.Addr, c.B.Addr, c.Shift(), wa, wb)
	}
	if c.Shift() <= 0 {
		t.Fatalf("hot did not move forward (shift %d)", c.Shift())
	}
	r := &d.Runs[c.Run]
	if !hasCause(r, Added, "pad_fn") {
		t.Errorf("run holding hot has causes %v, want added pad_fn", r.Causes)
	}
	if len(d.Added) != 1 || d.Added[0].Name != "pad_fn" {
		t.Errorf("added %v, want pad_fn", names(d.Added))
	}
}

// TestHotLoopMoved is issue 3's second done-when case: the hot inner loop
// moved inside its 64-byte line; the diff names the loop and both offsets,
// as objdump places them.
func TestHotLoopMoved(t *testing.T) {
	testutil.NeedTool(t, "gcc", "objdump")
	dir := t.TempDir()
	pa := gccBuild(t, dir, "a", loopSrc, "-O2", "-g")
	pb := gccBuild(t, dir, "b", loopSrc, "-O2", "-g", "-DPAD")
	la, lb := objdumpInnerLoop(t, pa, "hot"), objdumpInnerLoop(t, pb, "hot")
	if la.start%64 == lb.start%64 {
		t.Fatalf("fixture: inner loop at %d mod 64 in both builds; the test needs it moved", la.start%64)
	}
	d := Diff(mustOpen(t, pa), mustOpen(t, pb), DiffOptions{Symbols: []string{"hot"}})
	c := changeOf(t, d, "hot")
	if !c.Analysed {
		t.Fatal("hot was not analysed")
	}
	var inner *LoopChange
	for i := range c.Loops {
		if c.Loops[i].Inner() {
			inner = &c.Loops[i]
		}
	}
	if inner == nil || inner.A == nil || inner.B == nil {
		t.Fatalf("no inner loop of hot in both builds: %+v (%s)", c.Loops, c.LoopsNote)
	}
	if inner.A.Start != la.start || inner.A.End != la.end || inner.B.Start != lb.start || inner.B.End != lb.end {
		t.Errorf("inner loop [%#x,%#x) -> [%#x,%#x), objdump says [%#x,%#x) -> [%#x,%#x)",
			inner.A.Start, inner.A.End, inner.B.Start, inner.B.End, la.start, la.end, lb.start, lb.end)
	}
	if inner.A.LineOff != la.start%64 || inner.B.LineOff != lb.start%64 || !inner.Changed() {
		t.Errorf("line offsets %d -> %d, objdump %d -> %d", inner.A.LineOff, inner.B.LineOff, la.start%64, lb.start%64)
	}
	crossA := la.start/64 != (la.end-1)/64
	if inner.A.Crosses != crossA || inner.A.Len != int(la.end-la.start) {
		t.Errorf("A: crosses %v len %d, objdump: crosses %v len %d", inner.A.Crosses, inner.A.Len, crossA, la.end-la.start)
	}
	if !strings.HasSuffix(inner.B.Source, "b.c:10") {
		t.Errorf("inner loop source %q, want b.c:10", inner.B.Source)
	}
	if c.Weight < WeightInnerLoop {
		t.Errorf("hot weight %v, want at least %v for a moved inner loop", c.Weight, WeightInnerLoop)
	}
	if d.Ranked[0] != c {
		t.Errorf("top-ranked is %s, want hot", d.Ranked[0].Name())
	}

	// Padding restores the function's, hence the loop's, offset.
	p, err := ProposePadding(d, "hot")
	if err != nil {
		t.Fatal(err)
	}
	if p.Section != ".text" || p.Kind != Func {
		t.Errorf("padding in %s for a %v", p.Section, p.Kind)
	}
	if !strings.Contains(p.Asm(), "0xcc") || !strings.Contains(p.Asm(), `"ax",@progbits`) {
		t.Errorf("text padding not in an executable section filled with int3:\n%s", p.Asm())
	}
	checkPaddingBuild(t, dir, p, []string{"-O2", "-g", "-DPAD"}, "hot", nmAddrs(t, pa))
}

// TestProfileRanking ranks by a folded-stack profile: the hot function
// first, with its self fraction.
func TestProfileRanking(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	dir := t.TempDir()
	pa := gccBuild(t, dir, "a", loopSrc, "-O2")
	pb := gccBuild(t, dir, "b", loopSrc, "-O2", "-DPAD")
	prof := filepath.Join(dir, "hot.folded")
	if err := os.WriteFile(prof, []byte("b;main;hot 90\nb;main 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := profile.Read(prof)
	if err != nil {
		t.Fatal(err)
	}
	d := Diff(mustOpen(t, pa), mustOpen(t, pb), DiffOptions{Hot: h})
	if d.Ranking != "profile" {
		t.Errorf("ranking %q", d.Ranking)
	}
	top := d.Ranked[0]
	if top.Name() != "hot" || top.Hot < 0.89 || top.Hot > 0.91 {
		t.Errorf("top-ranked %s with hot %v, want hot with 0.9", top.Name(), top.Hot)
	}
	if !top.Analysed || len(top.Loops) == 0 {
		t.Errorf("hot function not analysed for loops (%s)", top.LoopsNote)
	}
}

// TestAlignFunctions compares -falign-functions=16 with =64: every
// function moves with nothing added or removed; the runs blame padding.
func TestAlignFunctions(t *testing.T) {
	testutil.NeedTool(t, "gcc", "nm")
	dir := t.TempDir()
	pa := gccBuild(t, dir, "a", loopSrc, "-O2", "-DPAD", "-falign-functions=16")
	pb := gccBuild(t, dir, "b", loopSrc, "-O2", "-DPAD", "-falign-functions=64")
	d := Diff(mustOpen(t, pa), mustOpen(t, pb), DiffOptions{})
	nmA, nmB := nmAddrs(t, pa), nmAddrs(t, pb)
	if d.Stats.Added != 0 || d.Stats.Removed != 0 {
		t.Errorf("added %v removed %v, want none", names(d.Added), names(d.Removed))
	}
	for _, fn := range []string{"hot", "pad_fn", "main"} {
		c := changeOf(t, d, fn)
		wa, wb := nm1(t, nmA, fn), nm1(t, nmB, fn)
		if c.A.Addr != wa || c.B.Addr != wb {
			t.Errorf("%s %#x -> %#x, nm %#x -> %#x", fn, c.A.Addr, c.B.Addr, wa, wb)
		}
		if c.B.Off(64) != 0 {
			t.Errorf("%s at %d mod 64 with -falign-functions=64", fn, c.B.Off(64))
		}
	}
	realigned := 0
	for i := range d.Runs {
		r := &d.Runs[i]
		if r.Shift == 0 || r.Section != ".text" {
			continue
		}
		if hasCause(r, Added, "") || hasCause(r, Removed, "") {
			t.Errorf("run from %s blames added/removed symbols: %v", r.First.Name(), r.Causes)
		}
		if hasCause(r, Realigned, "") {
			realigned++
		}
	}
	if realigned == 0 {
		t.Error("no .text run blames alignment padding")
	}
}

// TestFalseSharingGained: two writable counters in separate lines in A,
// in one line in B.
func TestFalseSharingGained(t *testing.T) {
	testutil.NeedTool(t, "gcc", "nm")
	const src = `
__attribute__((aligned(64))) volatile long c1;
#ifdef GAP
char gap[64];
#endif
volatile long c2;
int main(void) { c1++; c2++; return 0; }
`
	dir := t.TempDir()
	pa := gccBuild(t, dir, "a", src, "-O2", "-fno-toplevel-reorder", "-DGAP")
	pb := gccBuild(t, dir, "b", src, "-O2", "-fno-toplevel-reorder")
	nmA, nmB := nmAddrs(t, pa), nmAddrs(t, pb)
	sameA := nm1(t, nmA, "c1")/64 == nm1(t, nmA, "c2")/64
	sameB := nm1(t, nmB, "c1")/64 == nm1(t, nmB, "c2")/64
	if sameA || !sameB {
		t.Fatalf("fixture: c1, c2 share a line: A %v, B %v; want false, true", sameA, sameB)
	}
	d := Diff(mustOpen(t, pa), mustOpen(t, pb), DiffOptions{})
	found := false
	for _, s := range d.Shared {
		if s.X.Name() == "c1" && s.Y.Name() == "c2" || s.X.Name() == "c2" && s.Y.Name() == "c1" {
			found = true
			if !s.Gained || s.Line != nm1(t, nmB, "c1")/64*64 {
				t.Errorf("c1/c2 pair gained=%v line %#x, want gained at %#x", s.Gained, s.Line, nm1(t, nmB, "c1")/64*64)
			}
		}
	}
	if !found {
		t.Errorf("c1/c2 not reported as a gained shared line; pairs: %d", len(d.Shared))
	}
	if d.Stats.SharedGained == 0 {
		t.Error("stats count no gained pair")
	}
}

// TestLinkModes reads one program linked four ways; every function and
// object must be where nm says, and the type and linking must be right.
func TestLinkModes(t *testing.T) {
	testutil.NeedTool(t, "gcc", "nm")
	dir := t.TempDir()
	cases := []struct {
		name         string
		flags        []string
		typ          FileType
		pie, static_ bool
	}{
		{"nopie", []string{"-no-pie"}, "executable", false, false},
		{"pie", []string{"-pie", "-fPIE"}, "PIE executable", true, false},
		{"static", []string{"-static"}, "executable", false, true},
		{"staticpie", []string{"-static-pie", "-fPIE"}, "PIE executable", true, true},
		{"shared", []string{"-shared", "-fPIC"}, "shared library", false, false},
	}
	var bins []*Binary
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := gccBuild(t, dir, tc.name, loopSrc, append([]string{"-O2"}, tc.flags...)...)
			b := mustOpen(t, p)
			if b.Type != tc.typ || b.PIE != tc.pie || (b.Static != tc.static_ && tc.typ != "shared library") {
				t.Errorf("type %q pie %v static %v, want %q %v %v", b.Type, b.PIE, b.Static, tc.typ, tc.pie, tc.static_)
			}
			nm := nmAddrs(t, p)
			var tlsStart uint64 // nm prints TLS symbols as offsets in the TLS block
			for _, sec := range b.Sections {
				if sec.TLS {
					tlsStart = sec.Addr
					break
				}
			}
			checked, tls := 0, 0
			for i := range b.Symbols {
				s := &b.Symbols[i]
				want, ok := nm[s.Name]
				if !ok {
					t.Errorf("%s not in nm output", s.Name)
					continue
				}
				hit := false
				for _, w := range want {
					if s.Section.TLS {
						w += tlsStart
						tls++
					}
					hit = hit || w == s.Addr
				}
				if !hit {
					t.Errorf("%s at %#x, nm says %#x", s.Name, s.Addr, want)
				}
				checked++
			}
			if b.Lookup("hot") == nil || checked < 5 {
				t.Errorf("checked %d symbols; hot found: %v", checked, b.Lookup("hot") != nil)
			}
			if tc.static_ && tls == 0 {
				t.Error("static glibc build without TLS symbols: TLS addresses went unchecked")
			}
			bins = append(bins, b)
		})
	}
	if len(bins) >= 2 {
		d := Diff(bins[0], bins[1], DiffOptions{Symbols: []string{"hot"}})
		if c := changeOf(t, d, "hot"); !c.Analysed || len(c.Loops) == 0 {
			t.Errorf("non-PIE vs PIE: hot has no loops (%s)", c.LoopsNote)
		}
	}
}

// TestLocalDuplicatesAndClones matches static functions of the same name
// in two files by file, and gcc clones by their base names.
func TestLocalDuplicatesAndClones(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	dir := t.TempDir()
	one := `static int counter; __attribute__((noinline)) static int bump(int x) { return counter += x; } int one(int x) { return bump(x); }`
	two := `static long counter[2]; __attribute__((noinline)) static int bump(int x) { return counter[x&1] += x * 3; } int two(int x) { return bump(x) + 1; }`
	main := `int one(int); int two(int); int main(int c, char **v) { return one(c) + two(c); }`
	for _, f := range []struct{ name, src string }{{"one.c", one}, {"two.c", two}, {"main.c", main}} {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runCmd(t, dir, "gcc", "-O2", "-o", "a", "one.c", "two.c", "main.c")
	runCmd(t, dir, "gcc", "-O2", "-o", "b", "main.c", "two.c", "one.c") // other link order
	a, b := mustOpen(t, filepath.Join(dir, "a")), mustOpen(t, filepath.Join(dir, "b"))
	d := Diff(a, b, DiffOptions{})
	if d.Stats.Added != 0 || d.Stats.Removed != 0 {
		t.Errorf("added %v removed %v, want every symbol matched", names(d.Added), names(d.Removed))
	}
	for i := range d.Changes {
		c := &d.Changes[i]
		if c.A.Name == "counter" || strings.HasPrefix(c.A.Name, "bump") {
			if c.A.File != c.B.File || c.A.File == "" {
				t.Errorf("%s of %q matched with %s of %q", c.A.Name, c.A.File, c.B.Name, c.B.File)
			}
			if c.A.Size != c.B.Size {
				t.Errorf("%s: sizes %d and %d: matched across files", c.A.Name, c.A.Size, c.B.Size)
			}
		}
	}
}

// TestCompareRealObjectFile reads a relocatable object: sections at 0,
// symbols section-relative.
func TestCompareRealObjectFile(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "d.c"), []byte(dataSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	runCmd(t, dir, "gcc", append(append([]string{"-c"}, dataFlags...), "-DWITH_KEY", "d.c", "-o", "a.o")...)
	runCmd(t, dir, "gcc", append(append([]string{"-c"}, dataFlags...), "d.c", "-o", "b.o")...)
	a, b := mustOpen(t, filepath.Join(dir, "a.o")), mustOpen(t, filepath.Join(dir, "b.o"))
	if a.Type != "relocatable object" {
		t.Errorf("type %q", a.Type)
	}
	d := Diff(a, b, DiffOptions{})
	x := changeOf(t, d, "x")
	if x.Shift() != -16 || !hasCause(&d.Runs[x.Run], Removed, "mds_user_clear") {
		t.Errorf("x shift %d, causes %v", x.Shift(), d.Runs[x.Run].Causes)
	}
}
