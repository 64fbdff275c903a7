// Package disasm finds loops in machine code.
//
// A loop is found from its backward branches: a conditional jump, jmp or
// loop instruction whose target lies inside the function at or before the
// branch itself. The loop spans from that target (its first instruction) to
// just past the furthest backward branch to the same target, which is the
// span whose position inside 64-byte cache lines matters for speed.
//
// A backward branch only counts when the code at its target can flow back
// to the branch without leaving that span. This drops backward jumps that
// close no cycle, such as an out-of-line block jumping back to a function's
// epilogue, while keeping loops entered in the middle (a jmp to the loop
// test placed at the bottom).
//
// Only x86-64 is decoded (golang.org/x/arch/x86/x86asm). Bytes that do not
// decode, such as data or padding in the text section, are skipped one at a
// time and end the flow of control at that point.
package disasm

import (
	"debug/elf"
	"errors"
	"fmt"
	"math"
	"sort"

	"golang.org/x/arch/x86/x86asm"
)

// Loop is one loop in a function's code.
type Loop struct {
	// Start is the address of the loop's first instruction: the target of
	// its backward branches.
	Start uint64
	// End is the address just past the loop's furthest backward branch.
	End uint64
	// Len is End-Start in bytes.
	Len int
	// Depth is 0 for an outermost loop, 1 for a loop inside one other loop,
	// and so on. It counts the loops whose span contains this one's.
	Depth int
	// Branch is the address of the backward branch that ends the loop (the
	// furthest one when several jump back to Start).
	Branch uint64
}

// ErrUnsupportedArch is returned (wrapped) by [LoopsFor] for machines whose
// code this package cannot decode.
var ErrUnsupportedArch = errors.New("loop finding not supported for this architecture")

// LoopsFor is [Loops] for code of the given ELF machine type. Only
// elf.EM_X86_64 is supported; other machines give an error wrapping
// [ErrUnsupportedArch].
func LoopsFor(m elf.Machine, code []byte, addr uint64) ([]Loop, error) {
	switch m {
	case elf.EM_X86_64:
		return Loops(code, addr)
	case elf.EM_AARCH64:
		return nil, fmt.Errorf("arm64 loop finding not supported yet: %w", ErrUnsupportedArch)
	default:
		return nil, fmt.Errorf("%v loop finding not supported: %w", m, ErrUnsupportedArch)
	}
}

// Lines says where loop l sits relative to lines of the given size (64 for
// x86 cache lines): the offset of l.Start inside its line, and whether the
// span [l.Start, l.End) crosses a line boundary. A line size of 0 is
// treated as 64.
func Lines(l Loop, line uint64) (startOff uint64, crosses bool) {
	if line == 0 {
		line = 64
	}
	if l.End <= l.Start {
		return l.Start % line, false
	}
	return l.Start % line, l.Start/line != (l.End-1)/line
}

// Touched returns how many lines of the given size (0 means 64) the span
// [l.Start, l.End) touches.
func Touched(l Loop, line uint64) int {
	if line == 0 {
		line = 64
	}
	if l.End <= l.Start {
		return 0
	}
	return int((l.End-1)/line - l.Start/line + 1)
}

// flow says how control leaves an instruction.
type flow uint8

const (
	flowNext flow = iota // falls through to the next instruction
	flowCond             // conditional branch: target or next
	flowJump             // unconditional jump to target
	flowStop             // no successor we can follow: ret, indirect jump, bad bytes
)

// inst is one decoded instruction, with offsets relative to the code start.
type inst struct {
	off    int
	len    int
	flow   flow
	target int // branch target offset; meaningful only when hasTgt
	hasTgt bool
}

// Loops decodes code as x86-64 instructions loaded at addr and returns the
// loops it finds, sorted by Start (and, for equal starts, longest first).
// It never panics: undecodable bytes are skipped.
func Loops(code []byte, addr uint64) ([]Loop, error) {
	if len(code) == 0 {
		return nil, nil
	}
	if addr > math.MaxUint64-uint64(len(code)) {
		return nil, fmt.Errorf("disasm: code of %d bytes at %#x runs past the end of the address space", len(code), addr)
	}
	insts := decodeAll(code)

	// Backward branches grouped by the instruction they target.
	back := make(map[int][]int) // target inst index -> branch inst indexes
	for i, in := range insts {
		if !in.hasTgt || in.target > in.off {
			continue
		}
		t, ok := index(insts, in.target)
		if !ok {
			continue // target inside an instruction: not code we decoded
		}
		back[t] = append(back[t], i)
	}

	var loops []Loop
	for t, branches := range back {
		// Try the furthest branch first: the first one that closes a
		// cycle inside its span sets the loop's end.
		sort.Slice(branches, func(a, b int) bool { return branches[a] > branches[b] })
		for _, b := range branches {
			if !reaches(insts, t, b) {
				continue
			}
			start := insts[t].off
			end := insts[b].off + insts[b].len
			loops = append(loops, Loop{
				Start:  addr + uint64(start),
				End:    addr + uint64(end),
				Len:    end - start,
				Branch: addr + uint64(insts[b].off),
			})
			break
		}
	}
	setDepths(loops)
	return loops, nil
}

// decodeAll decodes code by a linear sweep.
func decodeAll(code []byte) []inst {
	insts := make([]inst, 0, len(code)/4+1)
	for off := 0; off < len(code); {
		x, err := decode(code[off:])
		if err != nil || x.Len <= 0 || x.Len > len(code)-off {
			insts = append(insts, inst{off: off, len: 1, flow: flowStop})
			off++
			continue
		}
		in := inst{off: off, len: x.Len, flow: flowNext}
		switch x.Op {
		case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JCXZ, x86asm.JE,
			x86asm.JECXZ, x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JNE,
			x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JRCXZ,
			x86asm.JS, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
			in.flow = flowCond
		case x86asm.JMP:
			in.flow = flowJump
		case x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ,
			x86asm.UD0, x86asm.UD1, x86asm.UD2, x86asm.HLT,
			x86asm.SYSRET, x86asm.SYSEXIT, x86asm.LJMP:
			in.flow = flowStop
		}
		if in.flow == flowCond || in.flow == flowJump {
			if rel, ok := x.Args[0].(x86asm.Rel); ok {
				t := int64(off) + int64(x.Len) + int64(rel)
				if t >= 0 && t < int64(len(code)) {
					in.target, in.hasTgt = int(t), true
				}
			} else if in.flow == flowJump {
				in.flow = flowStop // indirect jump: successors unknown
			}
		}
		insts = append(insts, in)
		off += x.Len
	}
	return insts
}

// decode wraps x86asm.Decode so that a decoder panic on hostile bytes
// becomes an ordinary undecodable byte.
func decode(b []byte) (x x86asm.Inst, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("x86asm panic: %v", r)
		}
	}()
	return x86asm.Decode(b, 64)
}

// index returns the index of the instruction starting at offset off.
func index(insts []inst, off int) (int, bool) {
	i := sort.Search(len(insts), func(i int) bool { return insts[i].off >= off })
	return i, i < len(insts) && insts[i].off == off
}

// reaches reports whether control can flow from instruction t to
// instruction b while staying inside instructions t..b.
func reaches(insts []inst, t, b int) bool {
	if t == b {
		return true
	}
	seen := make([]bool, b-t+1)
	stack := []int{t}
	seen[0] = true
	push := func(i int) bool {
		if i < t || i > b || seen[i-t] {
			return false
		}
		if i == b {
			return true
		}
		seen[i-t] = true
		stack = append(stack, i)
		return false
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		in := insts[i]
		if in.flow == flowNext || in.flow == flowCond {
			if push(i + 1) {
				return true
			}
		}
		if (in.flow == flowCond || in.flow == flowJump) && in.hasTgt {
			if j, ok := index(insts, in.target); ok && push(j) {
				return true
			}
		}
	}
	return false
}

// setDepths sorts loops by Start (longest first for equal starts) and sets
// each one's Depth to the number of loops enclosing it. Loops that overlap
// without nesting are not counted as enclosing each other.
func setDepths(loops []Loop) {
	sort.Slice(loops, func(i, j int) bool {
		if loops[i].Start != loops[j].Start {
			return loops[i].Start < loops[j].Start
		}
		return loops[i].End > loops[j].End
	})
	// Every loop on the stack contains the ones above it.
	var stack []int
	for i := range loops {
		for len(stack) > 0 && loops[stack[len(stack)-1]].End < loops[i].End {
			stack = stack[:len(stack)-1]
		}
		loops[i].Depth = len(stack)
		stack = append(stack, i)
	}
}
