package layout

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// smallELF is a synthetic executable with a loop in f and an object in
// .data and .bss.
func smallELF() *synthELF {
	// f: mov $10,%eax; 1: dec %eax; jne 1b; ret   (loop at f+5, 4 bytes)
	code := []byte{0xb8, 0x0a, 0, 0, 0, 0xff, 0xc8, 0x75, 0xfc, 0xc3}
	text := make([]byte, 64)
	copy(text[16:], code)
	return &synthELF{
		text: text, dataSize: 32, bssSize: 64,
		syms: []synthSym{
			{name: "f", sec: 1, off: 16, size: uint64(len(code))},
			{name: "g", sec: 1, off: 32, size: 16, local: true, file: "g.c"},
			{name: "d", sec: 2, off: 0, size: 8},
			{name: "counter", sec: 3, off: 8, size: 8, local: true, file: "g.c"},
		},
	}
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenSmallELF(t *testing.T) {
	p := writeTemp(t, "small", smallELF().bytes())
	b := mustOpen(t, p)
	if b.Type != "executable" || !b.Static || b.Arch != "x86-64" || len(b.Symbols) != 4 {
		t.Fatalf("%s", b.Describe())
	}
	f := b.Lookup("f")[0]
	if f.Addr != 0x401010 || f.Kind != Func || f.Section.Name != ".text" {
		t.Errorf("f: %+v", f)
	}
	c := b.Lookup("counter")[0]
	if !c.Local || c.File != "g.c" || !c.Writable() || c.Section.Name != ".bss" {
		t.Errorf("counter: %+v", c)
	}
	loops, err := b.loops(f)
	if err != nil || len(loops) != 1 || loops[0].FuncOff != 5 || loops[0].Len != 4 || loops[0].LineOff != 0x15 {
		t.Errorf("loops of f: %+v, %v", loops, err)
	}
}

// TestBadInputs: malformed, truncated and non-ELF inputs give a clear
// error naming the file, never a panic.
func TestBadInputs(t *testing.T) {
	good := smallELF().bytes()
	dir := t.TempDir()
	cases := []struct {
		desc string
		data []byte
		want string
		is   error
	}{
		{"empty file", nil, "empty file", ErrFormat},
		{"text file", []byte("hello world\nthis is not a binary\n"), "not an ELF file", ErrFormat},
		{"random bytes", []byte{0x00, 0x01, 0xfe, 0xff, 0x10, 0x20}, "not an ELF file", ErrFormat},
		{"ELF magic only", []byte("\x7fELF"), "truncated", ErrTruncated},
		{"header cut", good[:40], "ends before the headers", ErrTruncated},
		{"section headers cut", good[:len(good)-10], "", nil},
		{"symbol table cut", good[:len(good)*2/3], "", nil},
		{"bad class", append([]byte("\x7fELF\x09"), good[5:]...), "bad ELF file", nil},
		{"symbol map with a bad line", []byte("ffffffff81000000 T _stext\nzzzz T bad\n"), "line 2: bad address", nil},
		{"symbol map with a bad type", []byte("ffffffff81000000 TT _stext\n"), "line 1: bad symbol type", nil},
	}
	// A symbol table that claims more bytes than the file holds.
	long := append([]byte(nil), good...)
	shoff := binary.LittleEndian.Uint64(long[40:])
	binary.LittleEndian.PutUint64(long[shoff+4*64+32:], 1<<40) // section 4 is .symtab; sh_size
	cases = append(cases, struct {
		desc string
		data []byte
		want string
		is   error
	}{"symbol table past the end", long, "section .symtab (offset", ErrTruncated})
	for _, tc := range cases {
		t.Run(tc.desc, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.desc, " ", "_"))
			if err := os.WriteFile(p, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(p)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), p+": ") {
				t.Errorf("error %q does not start with the path", err)
			}
			if tc.want != "" && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
		})
	}
	// Every truncation of a good file: an error or a smaller layout, no panic.
	for n := 0; n < len(good); n += 7 {
		if _, err := Read(bytes.NewReader(good[:n]), int64(n)); err == nil && n < len(good)-64*7 {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
}

// TestStripped: a binary without .symtab says it is stripped and how to
// fix it.
func TestStripped(t *testing.T) {
	raw := smallELF().bytes()
	// Turn the symbol table into a plain PROGBITS section.
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	shoff := binary.LittleEndian.Uint64(raw[40:])
	for i, s := range f.Sections {
		if s.Type == elf.SHT_SYMTAB {
			binary.LittleEndian.PutUint32(raw[shoff+uint64(i)*64+4:], uint32(elf.SHT_PROGBITS))
		}
	}
	_, err = Read(bytes.NewReader(raw), int64(len(raw)))
	if !errors.Is(err, ErrStripped) || !strings.Contains(err.Error(), "the binary is stripped") || !strings.Contains(err.Error(), "rebuild without -s") {
		t.Errorf("stripped: %v", err)
	}
}

func TestStrippedGCC(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	dir := t.TempDir()
	p := gccBuild(t, dir, "s", loopSrc, "-O2", "-s")
	_, err := Open(p)
	if !errors.Is(err, ErrStripped) || !strings.Contains(err.Error(), ".dynsym") {
		t.Errorf("gcc -s: %v", err)
	}
}

const sysMapA = `ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81000100 T do_one
ffffffff81000140 t helper
ffffffff81000180 T hot_path
ffffffff810001c0 t helper
ffffffff81000200 T _etext
ffffffff82000000 D _sdata
ffffffff82000000 d some_table
ffffffff82000040 D _edata
ffffffff82001000 B __bss_start
ffffffff82001000 b switch_mm_always_ibpb
ffffffff82001010 b mds_user_clear
ffffffff82001020 b mds_idle_clear
ffffffff82001030 B hot_counters
ffffffff82001130 B __bss_stop
0000000000000000 D __per_cpu_start
0000000000000040 D pcpu_hot
0000000000000080 D __per_cpu_end
                 U undefined_thing
0000000000001000 A absolute_thing
`

// sysMapB removes mds_user_clear (as in the seed) and renames a clone.
var sysMapB = strings.NewReplacer(
	"ffffffff82001010 b mds_user_clear\n", "",
	"ffffffff82001020 b mds_idle_clear", "ffffffff82001010 b mds_idle_clear",
	"ffffffff82001030 B hot_counters", "ffffffff82001020 B hot_counters",
	"ffffffff82001130 B __bss_stop", "ffffffff82001120 B __bss_stop",
	"T do_one", "T do_one.isra.0",
).Replace(sysMapA)

func TestSystemMap(t *testing.T) {
	a := mustOpen(t, writeTemp(t, "System.map-a", []byte(sysMapA)))
	b := mustOpen(t, writeTemp(t, "System.map-b", []byte(sysMapB)))
	if a.Format != "system.map" || len(a.Symbols) == 0 {
		t.Fatalf("%s", a.Describe())
	}
	hc := a.Lookup("hot_counters")[0]
	if hc.Size != 0x100 || !hc.SizeGuessed || hc.Section.Name != ".bss" || !hc.Writable() {
		t.Errorf("hot_counters: size %#x guessed %v section %s", hc.Size, hc.SizeGuessed, hc.Section.Name)
	}
	if p := a.Lookup("pcpu_hot")[0]; p.Section.Name != ".data..percpu" {
		t.Errorf("pcpu_hot in %s", p.Section.Name)
	}
	if len(a.Lookup("undefined_thing")) != 0 || len(a.Lookup("absolute_thing")) != 0 {
		t.Error("undefined or absolute symbols were read")
	}
	// Aliases merge under the shorter name.
	if s := a.Lookup("_stext")[0]; s.Name != "_text" || len(s.Aliases) != 1 || s.Aliases[0] != "_stext" {
		t.Errorf("_stext is %s with aliases %v", s.Name, s.Aliases)
	}
	d := Diff(a, b, DiffOptions{})
	c := changeOf(t, d, "hot_counters")
	if c.Shift() != -16 || c.A.Off(64) != 0x30 || c.B.Off(64) != 0x20 {
		t.Errorf("hot_counters shift %d off64 %d -> %d", c.Shift(), c.A.Off(64), c.B.Off(64))
	}
	if r := &d.Runs[c.Run]; !hasCause(r, Removed, "mds_user_clear") || r.First.Name() != "mds_idle_clear" {
		t.Errorf("run from %s causes %v", r.First.Name(), r.Causes)
	}
	if c := changeOf(t, d, "do_one.isra.0"); c.A.Name != "do_one" {
		t.Errorf("do_one.isra.0 matched %s", c.A.Name)
	}
	if len(d.Notes) < 2 || !strings.Contains(strings.Join(d.Notes, "\n"), "symbol map") {
		t.Errorf("notes %q", d.Notes)
	}
	// nm -S output has sizes.
	nmS := "0000000000401000 0000000000000020 T main\n0000000000404000 0000000000000008 B counter\n                 U puts\n"
	n := mustOpen(t, writeTemp(t, "nm.txt", []byte(nmS)))
	if s := n.Lookup("counter")[0]; s.Size != 8 || s.SizeGuessed {
		t.Errorf("nm -S size %d guessed %v", s.Size, s.SizeGuessed)
	}
}

func TestMatchKey(t *testing.T) {
	for _, tc := range []struct{ name, key, base string }{
		{"foo", "foo", "foo"},
		{"foo.isra.0", "foo.isra.", "foo"},
		{"foo.isra.12", "foo.isra.", "foo"},
		{"foo.constprop.0.isra.0", "foo.constprop..isra.", "foo"},
		{"foo.part.0.cold", "foo.part..cold", "foo"},
		{"foo.cold", "foo.cold", "foo"},
		{"foo.lto_priv.3", "foo.lto_priv.", "foo"},
		{"counter.1", "counter.", "counter"},
		{"main.init.0", "main.init.", "main.init"},
		{"main.main.func1", "main.main.func1", "main.main.func1"},
		{"runtime.(*mheap).alloc", "runtime.(*mheap).alloc", "runtime.(*mheap).alloc"},
		{".hidden", ".hidden", ".hidden"},
		{"x.", "x.", "x."},
	} {
		if got := MatchKey(tc.name); got != tc.key {
			t.Errorf("MatchKey(%q) = %q, want %q", tc.name, got, tc.key)
		}
		if got := BaseName(tc.name); got != tc.base {
			t.Errorf("BaseName(%q) = %q, want %q", tc.name, got, tc.base)
		}
	}
}

// TestPaddingErrors: nothing to pad and unknown symbols are errors.
func TestPaddingErrors(t *testing.T) {
	a := mustOpen(t, writeTemp(t, "a.map", []byte(sysMapA)))
	d := Diff(a, a, DiffOptions{})
	if _, err := ProposePadding(d, ""); err == nil || !strings.Contains(err.Error(), "nothing to pad") {
		t.Errorf("identical builds: %v", err)
	}
	if _, err := ProposePadding(d, "hot_path"); err == nil || !strings.Contains(err.Error(), "offset 0 mod 64 in both") {
		t.Errorf("unmoved symbol: %v", err)
	}
	if _, err := ProposePadding(d, "nope"); err == nil || !strings.Contains(err.Error(), "no symbol nope") {
		t.Errorf("unknown symbol: %v", err)
	}
	b := mustOpen(t, writeTemp(t, "b.map", []byte(sysMapB)))
	d = Diff(a, b, DiffOptions{})
	if _, err := ProposePadding(d, "mds_user_clear"); err == nil || !strings.Contains(err.Error(), "only one of the builds") {
		t.Errorf("removed symbol: %v", err)
	}
	p, err := ProposePadding(d, "hot_counters")
	if err != nil {
		t.Fatal(err)
	}
	if p.Bytes != 16 || p.Before.Name != "mds_idle_clear" || p.After.Name != "switch_mm_always_ibpb" {
		t.Errorf("padding %d before %s after %s", p.Bytes, p.Before.Name, p.After.Name)
	}
	asm := p.Asm()
	for _, want := range []string{`.section .bss,"aw",@nobits`, ".skip 16", ".globl perfbot_pad_hot_counters", ".size perfbot_pad_hot_counters, 16"} {
		if !strings.Contains(asm, want) {
			t.Errorf("asm lacks %q:\n%s", want, asm)
		}
	}
}

// TestCausesAggregated: many removed symbols before a run are named up to
// a limit, then summed; a shuffled order gives reorder causes, not a list
// of everything in between.
func TestCausesAggregated(t *testing.T) {
	var a, b strings.Builder
	addr := uint64(0x404000)
	for i := 0; i < 100; i++ {
		line := fmt.Sprintf("%016x B obj_%d\n", addr, i)
		a.WriteString(line)
		if i < 10 || i >= 60 {
			// B drops obj_10..obj_59: everything after moves 50*16 bytes down.
			fmt.Fprintf(&b, "%016x B obj_%d\n", addr-uint64(map[bool]int{true: 0, false: 800}[i < 10]), i)
		}
		addr += 16
	}
	fmt.Fprintf(&a, "%016x B _end\n", addr)
	fmt.Fprintf(&b, "%016x B _end\n", addr-800)
	d := Diff(mustOpen(t, writeTemp(t, "a.map", []byte(a.String()))), mustOpen(t, writeTemp(t, "b.map", []byte(b.String()))), DiffOptions{})
	c := changeOf(t, d, "obj_60")
	r := &d.Runs[c.Run]
	if c.Shift() != -800 || r.First != c {
		t.Fatalf("obj_60 shift %d, run from %s", c.Shift(), r.First.Name())
	}
	named, summed, total := 0, 0, int64(0)
	for _, cs := range r.Causes {
		switch {
		case cs.Kind == Removed && cs.Symbol != nil:
			named++
		case cs.Kind == Removed:
			summed += cs.Count
		default:
			t.Errorf("unexpected cause %v", cs)
		}
		total += cs.Bytes
	}
	if named != maxListed || summed != 50-maxListed || total != -800 {
		t.Errorf("%d named, %d summed, %d bytes; want %d, %d, -800: %v", named, summed, total, maxListed, 50-maxListed, r.Causes)
	}

	// Shuffled functions: reorder causes.
	s1, s2 := vmlinuxLike(300, 0, "a"), vmlinuxLike(300, 0, "shuffled")
	pa, pb := writeTemp(t, "s1", s1.bytes()), writeTemp(t, "s2", s2.bytes())
	d = Diff(mustOpen(t, pa), mustOpen(t, pb), DiffOptions{})
	reorders := 0
	for i := range d.Runs {
		if hasCause(&d.Runs[i], Reordered, "") {
			reorders++
		}
		for _, cs := range d.Runs[i].Causes {
			if cs.Kind == Added || cs.Kind == Removed {
				t.Errorf("shuffle blamed on %v", cs)
			}
		}
	}
	if d.Stats.Matched != 300 || reorders == 0 {
		t.Errorf("matched %d, %d runs with reorder causes", d.Stats.Matched, reorders)
	}
}

func TestPairLoops(t *testing.T) {
	lp := func(lens ...int) []LoopPos {
		var out []LoopPos
		for _, n := range lens {
			out = append(out, LoopPos{Len: n, Start: uint64(len(out) * 100)})
		}
		return out
	}
	for _, tc := range []struct {
		a, b []int
		want string // pairs as "aLen/bLen", "-" for none
	}{
		{[]int{10, 20}, []int{10, 20}, "10/10 20/20"},
		{[]int{10, 20}, []int{11, 21}, "10/11 20/21"}, // same count: by position
		{[]int{10, 20, 30}, []int{10, 15, 20, 30}, "10/10 -/15 20/20 30/30"},
		{[]int{10, 15, 20}, []int{10, 20}, "10/10 15/- 20/20"},
		{nil, []int{5}, "-/5"},
	} {
		var got []string
		for _, l := range pairLoops(lp(tc.a...), lp(tc.b...)) {
			x, y := "-", "-"
			if l.A != nil {
				x = fmt.Sprint(l.A.Len)
			}
			if l.B != nil {
				y = fmt.Sprint(l.B.Len)
			}
			got = append(got, x+"/"+y)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("pairLoops(%v, %v) = %s, want %s", tc.a, tc.b, g, tc.want)
		}
	}
}
