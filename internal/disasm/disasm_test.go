package disasm

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// kernelC is the hot-loop shape from the project's alignment notes: a short
// variable-trip inner loop inside an outer loop over a 4096-element array.
const kernelC = `
#include <stdio.h>
#define N 4096
unsigned a[N];
__attribute__((noinline)) unsigned long kernel(const unsigned *p, int n) {
	unsigned long s = 0;
	for (int i = 0; i < n; i++) {
		unsigned v = p[i];
		int x = (i & 3) + 1;
		do { s += v; v >>= 1; } while (--x);
	}
	return s;
}
__attribute__((noinline)) int noloop(int a, int b) { return a * b + 3; }
int main(void) {
	for (int i = 0; i < N; i++) a[i] = i * 2654435761u;
	printf("%lu %d\n", kernel(a, N), noloop(2, 3));
	return 0;
}
`

// build compiles (or assembles) src with gcc and the given flags into an
// executable and returns its path.
func build(t *testing.T, name, src string, flags ...string) string {
	t.Helper()
	testutil.NeedTool(t, "gcc", "objdump")
	dir := t.TempDir()
	in := filepath.Join(dir, name)
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "prog")
	args := append(append([]string{}, flags...), "-o", out, in)
	if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// funcBytes reads function sym's bytes and address from an ELF file.
func funcBytes(t *testing.T, path, sym string) ([]byte, uint64) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name != sym || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		sec := f.Sections[s.Section]
		data, err := sec.Data()
		if err != nil {
			t.Fatal(err)
		}
		off := s.Value - sec.Addr
		return data[off : off+s.Size], s.Value
	}
	t.Fatalf("%s: no function %s", path, sym)
	return nil, 0
}

// objInst is one instruction line of objdump -d.
type objInst struct {
	addr, next uint64 // next: address of the following instruction
	branch     bool   // a jcc, jmp or loop with a direct target
	target     uint64
}

var (
	objLine   = regexp.MustCompile(`^\s*([0-9a-f]+):\t(.*)$`)
	objBranch = regexp.MustCompile(`(?:^|\s)(j[a-z]+|loop[a-z]*)\s+([0-9a-f]+) <`)
)

// objdump disassembles function sym of path with objdump and returns its
// instructions; the last one's next is the symbol's end.
func objdump(t *testing.T, path, sym string, end uint64) []objInst {
	t.Helper()
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", "--disassemble="+sym, path).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	var insts []objInst
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := objLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		addr, err := strconv.ParseUint(m[1], 16, 64)
		if err != nil {
			t.Fatalf("objdump line %q: %v", sc.Text(), err)
		}
		in := objInst{addr: addr}
		if b := objBranch.FindStringSubmatch(m[2]); b != nil {
			in.branch = true
			in.target, _ = strconv.ParseUint(b[2], 16, 64)
		}
		if n := len(insts); n > 0 {
			insts[n-1].next = addr
		}
		insts = append(insts, in)
	}
	if len(insts) == 0 {
		t.Fatalf("objdump printed no instructions for %s:\n%s", sym, out)
	}
	insts[len(insts)-1].next = end
	return insts
}

// backward returns the loops objdump's output implies when every backward
// branch inside the function closes a loop: one per target, ending after
// the furthest branch to it.
func backward(insts []objInst, start, end uint64) []Loop {
	byTarget := map[uint64]Loop{}
	for _, in := range insts {
		if !in.branch || in.target > in.addr || in.target < start || in.target >= end {
			continue
		}
		l := byTarget[in.target]
		if in.next > l.End {
			l = Loop{Start: in.target, End: in.next, Len: int(in.next - in.target), Branch: in.addr}
		}
		byTarget[in.target] = l
	}
	var loops []Loop
	for _, l := range byTarget {
		loops = append(loops, l)
	}
	sort.Slice(loops, func(i, j int) bool { return loops[i].Start < loops[j].Start })
	return loops
}

// spans drops Depth so that loops can be compared with objdump's.
func spans(loops []Loop) []Loop {
	out := make([]Loop, len(loops))
	for i, l := range loops {
		l.Depth = 0
		out[i] = l
	}
	return out
}

func checkAgainstObjdump(t *testing.T, bin, sym string) []Loop {
	t.Helper()
	code, addr := funcBytes(t, bin, sym)
	got, err := Loops(code, addr)
	if err != nil {
		t.Fatal(err)
	}
	want := backward(objdump(t, bin, sym, addr+uint64(len(code))), addr, addr+uint64(len(code)))
	if fmt.Sprint(spans(got)) != fmt.Sprint(want) {
		t.Errorf("%s loops:\n got  %+v\n want %+v (from objdump)", sym, got, want)
	}
	return got
}

func TestGCCNestedLoop(t *testing.T) {
	for _, flags := range [][]string{{"-O2"}, {"-O2", "-falign-loops=64"}, {"-O2", "-falign-functions=64"}, {"-O2", "-no-pie"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			bin := build(t, "k.c", kernelC, flags...)
			loops := checkAgainstObjdump(t, bin, "kernel")
			if len(loops) != 2 {
				t.Fatalf("kernel: want 2 loops (outer for, inner do-while), got %+v", loops)
			}
			outer, inner := loops[0], loops[1]
			if outer.Depth != 0 || inner.Depth != 1 {
				t.Errorf("depths = %d, %d; want 0, 1", outer.Depth, inner.Depth)
			}
			if !(outer.Start <= inner.Start && inner.End <= outer.End) {
				t.Errorf("inner loop %+v not inside outer %+v", inner, outer)
			}
			// The inner do-while is about 13 bytes of code.
			if inner.Len < 8 || inner.Len > 24 {
				t.Errorf("inner loop is %d bytes; want the short do-while (about 13)", inner.Len)
			}
			off, crosses := Lines(inner, 64)
			if off != inner.Start%64 || crosses != (inner.Start/64 != (inner.End-1)/64) {
				t.Errorf("Lines(inner) = %d, %v", off, crosses)
			}
			if flags[len(flags)-1] == "-falign-loops=64" {
				// gcc pads before the outer loop only; objdump
				// (checked above) says where the inner one lands.
				if o, _ := Lines(outer, 64); o != 0 {
					t.Errorf("-falign-loops=64: outer loop at %#x, offset %d in its line; want 0", outer.Start, o)
				}
			}
			t.Logf("outer %#x-%#x (line offset %d), inner %#x-%#x (line offset %d, crosses %v)",
				outer.Start, outer.End, outer.Start%64, inner.Start, inner.End, off, crosses)
		})
	}
}

func TestGCCNoLoop(t *testing.T) {
	bin := build(t, "k.c", kernelC, "-O2")
	if loops := checkAgainstObjdump(t, bin, "noloop"); len(loops) != 0 {
		t.Errorf("noloop: got loops %+v", loops)
	}
	// main's initialisation loop is found too (checked against objdump).
	if loops := checkAgainstObjdump(t, bin, "main"); len(loops) == 0 {
		t.Errorf("main: want the init loop, got %+v", loops)
	}
}

// asmFuncs are hand-written shapes assembled by gcc, each a function whose
// loops we know.
const asmFuncs = `
	.text
	.globl main
	.type main, @function
main:
	xorl %eax, %eax
	ret
	.size main, .-main

# A loop entered at its test at the bottom: one loop, from .Lbody to jnz.
	.globl rotated
	.type rotated, @function
rotated:
	xorl %eax, %eax
	jmp .Lcond
.Lbody:
	addl %edi, %eax
	addl $3, %eax
.Lcond:
	decl %esi
	jnz .Lbody
	ret
	.size rotated, .-rotated

# A cold block placed after the return jumps back to the epilogue: a
# backward branch that closes no cycle, so no loop.
	.globl coldback
	.type coldback, @function
coldback:
	testl %edi, %edi
	jne .Lcold
.Lret:
	movl %esi, %eax
	ret
.Lcold:
	call main
	jmp .Lret
	.size coldback, .-coldback

# Two backward branches to the same target (a continue and the loop test)
# form one loop ending at the furthest; a self-loop and a loop instruction
# are loops of their own.
	.globl multi
	.type multi, @function
multi:
	movl $10, %ecx
.Ltop:
	addl $1, %eax
	testl $1, %eax
	jz .Ltop
	subl $2, %eax
	decl %ecx
	jnz .Ltop
	movl $4, %ecx
.Lloop:
	addl %ecx, %eax
	loop .Lloop
	testl %eax, %eax
	js .Lspin
	ret
.Lspin:
	jmp .Lspin
	.size multi, .-multi

# Data in the text section before a loop: bytes that do not decode in
# 64-bit mode are skipped and the loop after them is still found.
	.globl withdata
	.type withdata, @function
withdata:
	jmp .Lstart
	.byte 0x06, 0x07, 0x27, 0x2f, 0x37, 0x3f, 0xd6
.Lstart:
	addl $1, %eax
	cmpl $100, %eax
	jb .Lstart
	ret
	.size withdata, .-withdata
	.section .note.GNU-stack,"",@progbits
`

func TestAssembledShapes(t *testing.T) {
	bin := build(t, "f.s", asmFuncs)
	t.Run("rotated", func(t *testing.T) {
		loops := checkAgainstObjdump(t, bin, "rotated")
		if len(loops) != 1 || loops[0].Depth != 0 {
			t.Errorf("rotated: want one outermost loop, got %+v", loops)
		}
	})
	t.Run("coldback", func(t *testing.T) {
		code, addr := funcBytes(t, bin, "coldback")
		insts := objdump(t, bin, "coldback", addr+uint64(len(code)))
		if n := len(backward(insts, addr, addr+uint64(len(code)))); n != 1 {
			t.Fatalf("objdump shows %d backward branches in coldback; the test expects 1", n)
		}
		if loops, err := Loops(code, addr); err != nil || len(loops) != 0 {
			t.Errorf("coldback: want no loop (the backward jmp closes no cycle), got %+v, %v", loops, err)
		}
	})
	t.Run("multi", func(t *testing.T) {
		loops := checkAgainstObjdump(t, bin, "multi")
		if len(loops) != 3 {
			t.Fatalf("multi: want 3 loops, got %+v", loops)
		}
		for _, l := range loops {
			if l.Depth != 0 {
				t.Errorf("multi: loop %+v should be outermost", l)
			}
		}
		if loops[2].Len != 2 {
			t.Errorf("self-loop jmp . should be 2 bytes, got %+v", loops[2])
		}
	})
	t.Run("withdata", func(t *testing.T) {
		loops := checkAgainstObjdump(t, bin, "withdata")
		if len(loops) != 1 {
			t.Errorf("withdata: want one loop after the data bytes, got %+v", loops)
		}
	})
}

func TestLines(t *testing.T) {
	for _, c := range []struct {
		l       Loop
		line    uint64
		off     uint64
		crosses bool
		touched int
	}{
		{Loop{Start: 0x1000, End: 0x1040}, 64, 0, false, 1},
		{Loop{Start: 0x1034, End: 0x1041}, 64, 52, true, 2},
		{Loop{Start: 0x1034, End: 0x1041}, 0, 52, true, 2},
		{Loop{Start: 0x1034, End: 0x1040}, 64, 52, false, 1},
		{Loop{Start: 0x1034, End: 0x1041}, 32, 20, true, 2},
		{Loop{Start: 0x1000, End: 0x1101}, 64, 0, true, 5},
		{Loop{Start: 0x1005, End: 0x1005}, 64, 5, false, 0},
	} {
		off, crosses := Lines(c.l, c.line)
		if off != c.off || crosses != c.crosses {
			t.Errorf("Lines(%#x-%#x, %d) = %d, %v; want %d, %v", c.l.Start, c.l.End, c.line, off, crosses, c.off, c.crosses)
		}
		if n := Touched(c.l, c.line); n != c.touched {
			t.Errorf("Touched(%#x-%#x, %d) = %d; want %d", c.l.Start, c.l.End, c.line, n, c.touched)
		}
	}
}

func TestLoopsFor(t *testing.T) {
	// 0x1000: dec ecx; jnz 0x1000
	code := []byte{0xff, 0xc9, 0x75, 0xfc}
	loops, err := LoopsFor(elf.EM_X86_64, code, 0x1000)
	if err != nil || len(loops) != 1 || loops[0] != (Loop{Start: 0x1000, End: 0x1004, Len: 4, Branch: 0x1002}) {
		t.Errorf("LoopsFor(x86-64) = %+v, %v", loops, err)
	}
	_, err = LoopsFor(elf.EM_AARCH64, code, 0x1000)
	if !errors.Is(err, ErrUnsupportedArch) || !strings.Contains(err.Error(), "arm64 loop finding not supported yet") {
		t.Errorf("LoopsFor(arm64) error = %v", err)
	}
	if _, err := LoopsFor(elf.EM_RISCV, code, 0); !errors.Is(err, ErrUnsupportedArch) {
		t.Errorf("LoopsFor(riscv) error = %v", err)
	}
}

func TestEdgeInputs(t *testing.T) {
	if loops, err := Loops(nil, 0); err != nil || loops != nil {
		t.Errorf("Loops(nil) = %v, %v", loops, err)
	}
	if _, err := Loops([]byte{0x90, 0x90}, ^uint64(0)); err == nil {
		t.Error("Loops at the top of the address space: want an error")
	}
	// A jump whose target is outside the function, one into the middle of
	// an instruction, and a truncated jump: none is a loop.
	for _, code := range [][]byte{
		{0x90, 0xeb, 0xf0},                         // jmp -16: before the function
		{0xb8, 0x01, 0x00, 0x00, 0x00, 0xeb, 0xfa}, // jmp into mov's immediate
		{0x90, 0x0f, 0x85},                         // truncated jnz rel32
	} {
		if loops, err := Loops(code, 0x400000); err != nil || len(loops) != 0 {
			t.Errorf("Loops(% x) = %+v, %v; want none", code, loops, err)
		}
	}
}

// checkInvariants is what every Loops result must satisfy.
func checkInvariants(t *testing.T, code []byte, addr uint64, loops []Loop) {
	t.Helper()
	end := addr + uint64(len(code))
	for i, l := range loops {
		if l.Start < addr || l.End > end || l.Start >= l.End || l.Len != int(l.End-l.Start) {
			t.Fatalf("loop %d %+v outside [%#x, %#x) or inconsistent", i, l, addr, end)
		}
		if l.Branch < l.Start || l.Branch >= l.End || l.Depth < 0 || l.Depth > i {
			t.Fatalf("loop %d %+v: bad branch or depth", i, l)
		}
		if i > 0 && loops[i-1].Start >= l.Start {
			t.Fatalf("loops not sorted by distinct Start: %+v then %+v", loops[i-1], l)
		}
	}
}

func FuzzLoops(f *testing.F) {
	f.Add([]byte{0xff, 0xc9, 0x75, 0xfc}, uint64(0x1000))
	f.Fuzz(func(t *testing.T, code []byte, addr uint64) {
		loops, err := Loops(code, addr)
		if err != nil {
			if addr+uint64(len(code)) >= addr {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		checkInvariants(t, code, addr, loops)
	})
}

// BenchmarkLoopsGoBinary finds the loops of every function in the go
// command's own binary.
func BenchmarkLoopsGoBinary(b *testing.B) {
	testutil.NeedTool(b, "go")
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Fatal(err)
	}
	f, err := elf.Open(goBin)
	if err != nil {
		testutil.SkipIncapable(b, "the go command here is not an ELF file: %v", err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		testutil.SkipIncapable(b, "the go command here has no symbol table: %v", err)
	}
	text := f.Section(".text")
	data, err := text.Data()
	if err != nil {
		b.Fatal(err)
	}
	type fn struct {
		code []byte
		addr uint64
	}
	var fns []fn
	total := 0
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value < text.Addr || s.Value+s.Size > text.Addr+text.Size || s.Size == 0 {
			continue
		}
		off := s.Value - text.Addr
		fns = append(fns, fn{data[off : off+s.Size], s.Value})
		total += int(s.Size)
	}
	b.SetBytes(int64(total))
	b.ResetTimer()
	for b.Loop() {
		n := 0
		for _, fn := range fns {
			loops, _ := Loops(fn.code, fn.addr)
			n += len(loops)
		}
		b.ReportMetric(float64(n), "loops")
	}
	b.ReportMetric(float64(len(fns)), "funcs")
}
