package layout

import (
	"debug/elf"
	"errors"

	"github.com/perfbot/perfbot/internal/disasm"
)

// loops disassembles function s and places its loops in 64-byte lines.
func (b *Binary) loops(s *Symbol) ([]LoopPos, error) {
	if b.Format != ELF {
		return nil, errors.New("no code in a symbol map")
	}
	code, err := b.code(s)
	if err != nil {
		return nil, err
	}
	found, err := disasm.LoopsFor(elf.Machine(b.machine), code, s.Addr)
	if err != nil {
		return nil, err
	}
	out := make([]LoopPos, 0, len(found))
	for _, l := range found {
		if b.Go && l.Start == s.Addr && l.End == s.End() {
			// The stack-growth path of a Go function: its epilogue calls
			// runtime.morestack and jumps back to the entry. Not a loop.
			continue
		}
		off, crosses := disasm.Lines(l, LineSize)
		out = append(out, LoopPos{
			Start: l.Start, End: l.End, FuncOff: l.Start - s.Addr,
			LineOff: off, Len: l.Len, Depth: l.Depth, Crosses: crosses,
			Lines: disasm.Touched(l, LineSize), Inner: true,
		})
	}
	// A loop is inner when no other loop lies inside its span.
	for i := range out {
		for j := range out {
			if i != j && out[j].Start >= out[i].Start && out[j].End <= out[i].End &&
				(out[j].Start != out[i].Start || out[j].End != out[i].End) {
				out[i].Inner = false
				break
			}
		}
	}
	return out, nil
}
