package knobs

import (
	"debug/elf"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/testutil"
)

// cProgram is a small C program in two files, with code (kernel, an inner
// loop), zeroed data (table, .bss), initialised data (counts, .data) and
// constants (weights, .rodata). -DEXTRA adds a function just before kernel
// (code shift); -DDROP removes a 16-byte object just before table (data
// shift). Its Makefile honours CFLAGS and EXTRA_OBJS like the demo's.
var cProgram = map[string]string{
	"kern.c": `
#ifndef DROP
double range[2];
#endif
int table[256];
int counts[8] = {1, 2, 3, 4, 5, 6, 7, 8};
const int weights[16] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};

#ifdef EXTRA
long extra(void) { return 4096; }
#endif

__attribute__((noinline)) unsigned long kernel(const unsigned *a, long n)
{
	unsigned long s = 0;

	for (long i = 0; i < n; i++) {
		unsigned x = (i & 3) + 1;
		unsigned long v = a[i];

		do {
			s += v;
			v >>= 1;
		} while (--x);
	}
	return s + table[n & 255] + counts[n & 7] + weights[n & 15];
}
`,
	"main.c": `
#include <stdio.h>
unsigned long kernel(const unsigned *a, long n);
static unsigned input[1024];

/* run is in .text; gcc puts main in .text.startup. */
__attribute__((noinline)) int run(void)
{
	int local;
	for (int i = 0; i < 1024; i++)
		input[i] = i * 2654435761u;
	printf("sum: %lu\n", kernel(input, 1024));
	printf("stack: %lu\n", (unsigned long)&local);
	return 0;
}

int main(void) { return run(); }
`,
	"Makefile": `prog:
	$(CC) -O2 -fno-toplevel-reorder -malign-data=abi $(CFLAGS) -c -o kern.o kern.c
	$(CC) -O2 $(CFLAGS) -c -o main.o main.c
	$(CC) $(LDFLAGS) -o prog $(EXTRA_OBJS) kern.o main.o
`,
}

func cBuild(t *testing.T, v job.Variant, cflags string) *layout.Binary {
	t.Helper()
	env := map[string]string{}
	if cflags != "" {
		env["CFLAGS"] = cflags
	}
	dir := buildIn(t, cProgram, "make -s prog", env, v)
	return open(t, filepath.Join(dir, "prog"))
}

func cPresetIn(t *testing.T) Preset {
	t.Helper()
	p, err := LookupIn("c", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCForcedAlignment: the c preset's ForcedAlignment puts every function
// of the program and its inner loop at the start of a 64-byte line (issue 4:
// "forced -falign-functions=64 plus loop alignment").
func TestCForcedAlignment(t *testing.T) {
	testutil.NeedTool(t, "gcc", "make")
	p := cPresetIn(t)
	plain := cBuild(t, job.Variant{}, "")
	al := cBuild(t, p.ForcedAlignment(), "")
	for _, name := range []string{"kernel", "main"} {
		if off := sym(t, al, name).Off(64); off != 0 {
			t.Errorf("aligned build: %s at offset %d mod 64, want 0", name, off)
		}
	}
	if sym(t, plain, "kernel").Off(64) == 0 && sym(t, plain, "main").Off(64) == 0 {
		t.Logf("note: the plain build already has both functions at 0 mod 64")
	}
	d := layout.Diff(plain, al, layout.DiffOptions{Symbols: []string{"kernel"}, NoSource: true})
	c := change(t, d, "kernel")
	var outer int
	for _, l := range c.Loops {
		if l.B == nil || l.B.Depth != 0 {
			continue
		}
		outer++
		if l.B.LineOff != 0 {
			t.Errorf("aligned build: kernel's outer loop at line offset %d, want 0", l.B.LineOff)
		}
	}
	if outer == 0 {
		t.Fatalf("found no loop in kernel (%s)", c.LoopsNote)
	}
	// What triage relies on: a commit that only shifts code (-DEXTRA adds a
	// function before kernel) changes kernel's offset in the plain builds
	// but not in the aligned ones, loops included.
	shifted := cBuild(t, job.Variant{}, "-DEXTRA")
	if sym(t, plain, "kernel").Off(64) == sym(t, shifted, "kernel").Off(64) {
		t.Fatalf("-DEXTRA did not move kernel to another offset mod 64: the test program needs fixing")
	}
	alShifted := cBuild(t, p.ForcedAlignment(), "-DEXTRA")
	da := layout.Diff(al, alShifted, layout.DiffOptions{Symbols: []string{"kernel"}, NoSource: true})
	ca := change(t, da, "kernel")
	if ca.Off64Changed() {
		t.Errorf("aligned builds: kernel moved from %d to %d mod 64 with -DEXTRA, want no change", ca.A.Off(64), ca.B.Off(64))
	}
	for _, l := range ca.Loops {
		if l.Changed() {
			t.Errorf("aligned builds: kernel's loop %d changed its line offset with -DEXTRA", l.Index)
		}
	}
	// The flags come from the wrappers, not from CFLAGS: a CFLAGS in the
	// environment would replace a Makefile's "CFLAGS ?= -O3". The job's
	// own CFLAGS stay as they are.
	v := p.ForcedAlignment()
	if _, set := v.Env["CFLAGS"]; set {
		t.Errorf("forced alignment sets CFLAGS=%q; the wrappers carry the flags", v.Env["CFLAGS"])
	}
	withJob := cBuild(t, v, "-DEXTRA")
	if len(withJob.Lookup("extra")) != 1 || sym(t, withJob, "kernel").Off(64) != 0 {
		t.Errorf("forced alignment over the job's CFLAGS=-DEXTRA: want extra() present and kernel aligned")
	}
}

// TestCLayouts: text layouts move only code, by 16 bytes per layout; data
// layouts move only data, in .bss and .rodata (not .data, see padAsm); the joint layouts
// move both; the first layout of each is the plain build.
func TestCLayouts(t *testing.T) {
	testutil.NeedTool(t, "gcc", "make")
	p := cPresetIn(t)
	plain := cBuild(t, job.Variant{}, "")
	const n = 4
	for _, tc := range []struct {
		kind       string
		vs         []job.Variant
		text, data bool
	}{
		{"text", p.TextLayouts(n), true, false},
		{"data", p.DataLayouts(n), false, true},
		{"joint", p.Layouts(n), true, true},
	} {
		if len(tc.vs) != n {
			t.Fatalf("%s layouts: got %d, want %d", tc.kind, len(tc.vs), n)
		}
		if tc.vs[0].Name != "" || len(tc.vs[0].Env) != 0 {
			t.Errorf("%s layout 0 = %+v, want the plain build", tc.kind, tc.vs[0])
		}
		for k := 1; k < n; k++ {
			b := cBuild(t, tc.vs[k], "")
			want := func(moves bool) int64 {
				if moves {
					return int64(k * PadStep)
				}
				return 0
			}
			for _, s := range []struct {
				name  string
				moves bool
			}{
				{"kernel", tc.text}, {"main", tc.text}, {"run", tc.text},
				{"table", tc.data}, {"weights", tc.data}, {"counts", false},
			} {
				if got := shift(t, plain, b, s.name); got != want(s.moves) {
					t.Errorf("%s layout %d (%s): %s moved %+d bytes, want %+d", tc.kind, k, tc.vs[k].Name, s.name, got, want(s.moves))
				}
			}
		}
	}
	if got := len(p.TextLayouts(100)); got != MaxLayouts {
		t.Errorf("TextLayouts(100) gave %d layouts, want MaxLayouts=%d", got, MaxLayouts)
	}
	if got := p.Layouts(0); got != nil {
		t.Errorf("Layouts(0) = %v, want none", got)
	}
}

// TestCRestore: a commit that shifts code (a function added before the
// kernel) or data (an object removed before the table) is rebuilt with the
// padding layout.ProposePadding computes, and the symbol gets its old
// offset back (issue 4's restore experiment, the seed's third column).
func TestCRestore(t *testing.T) {
	testutil.NeedTool(t, "gcc", "make")
	p := cPresetIn(t)
	work := t.TempDir()
	a := cBuild(t, job.Variant{}, "")
	for _, tc := range []struct {
		flag, symbol string
		kind         layout.Kind
	}{
		{"-DEXTRA", "kernel", layout.Func},
		{"-DDROP", "table", layout.Object},
	} {
		b := cBuild(t, job.Variant{}, tc.flag)
		if sym(t, a, tc.symbol).Off(64) == sym(t, b, tc.symbol).Off(64) {
			t.Fatalf("%s did not move %s to another offset mod 64: the test program needs fixing", tc.flag, tc.symbol)
		}
		pad, err := layout.ProposePadding(layout.Diff(a, b, layout.DiffOptions{NoSource: true}), tc.symbol)
		if err != nil {
			t.Fatal(err)
		}
		if pad.Kind != tc.kind {
			t.Errorf("%s: padding kind %v, want %v", tc.symbol, pad.Kind, tc.kind)
		}
		v, err := p.Restore(pad, work)
		if err != nil {
			t.Fatal(err)
		}
		if v.Name != RestoreName || v.Env[EnvPadSymbol] != tc.symbol {
			t.Errorf("restore variant %+v: want name %q and %s=%s", v, RestoreName, EnvPadSymbol, tc.symbol)
		}
		r := cBuild(t, v, tc.flag)
		if got, want := sym(t, r, tc.symbol).Off(64), sym(t, a, tc.symbol).Off(64); got != want {
			t.Errorf("%s restored by %d bytes in %s: offset %d mod 64, want the old %d", tc.symbol, pad.Bytes, pad.Section, got, want)
		}
	}
	if _, err := p.Restore(nil, work); err == nil {
		t.Error("Restore(nil) succeeded")
	}
	if _, err := p.Restore(&layout.Padding{Symbol: "x", Bytes: 16, Go: true}, work); err == nil || !strings.Contains(err.Error(), "go preset") {
		t.Errorf("Restore of a Go padding with the c preset: err = %v, want advice to use the go preset", err)
	}
}

// TestPadAsmAssembles checks the padding files assemble, with the sizes
// they claim.
func TestPadAsmAssembles(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	p, err := LookupIn("c", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v := p.Layouts(3)[2]
	asm := v.Env[EnvPadAsm]
	obj := filepath.Join(t.TempDir(), "pad.o")
	dir := buildIn(t, nil, "gcc -c -o "+obj+" "+asm, nil, job.Variant{})
	_ = dir
	b := open(t, obj)
	for _, sec := range []string{"text", "bss", "rodata"} {
		s := sym(t, b, "perfbot_pad_"+sec+"_32")
		if s.Size != 32 {
			t.Errorf("%s padding is %d bytes, want 32", sec, s.Size)
		}
	}
}

// TestCDebugInfo: the c preset's DebugInfo build has DWARF and the plain
// build's layout, symbol for symbol, on a Makefile that never says -g.
func TestCDebugInfo(t *testing.T) {
	testutil.NeedTool(t, "gcc", "make")
	p := cPresetIn(t)
	d, ok := p.(DebugInfo)
	if !ok {
		t.Fatal("the c preset has no DebugInfo variant")
	}
	v := d.DebugInfo()
	if v.Name != DebugName || v.Env[EnvDebugInfo] != "1" {
		t.Errorf("debug variant %+v", v)
	}
	for _, flags := range []string{"", "-DDROP"} {
		plain := cBuild(t, job.Variant{}, flags)
		debug := cBuild(t, v, flags)
		if hasDWARF(t, plain.Path) || !hasDWARF(t, debug.Path) {
			t.Errorf("CFLAGS=%q: DWARF in the plain build %v, in the debug build %v; want false, true", flags, hasDWARF(t, plain.Path), hasDWARF(t, debug.Path))
		}
		if err := layout.SameLayout(plain, debug); err != nil {
			t.Errorf("CFLAGS=%q: the debug build's layout differs: %v", flags, err)
		}
	}
}

// hasDWARF reports whether the ELF file at path has a .debug_info section.
func hasDWARF(t *testing.T, path string) bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Section(".debug_info") != nil
}
