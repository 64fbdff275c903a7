package layout

import (
	"fmt"
	"strings"
)

// Padding is the number of bytes to insert into build B so that a symbol
// gets back the offset inside its 64-byte line it had in build A.
type Padding struct {
	// Symbol is the symbol whose offset is restored.
	Symbol string
	Kind   Kind
	// Section is B's section to pad, e.g. ".bss" or ".text".
	Section string
	// Bytes is how many bytes to insert, 1 to 63.
	Bytes uint64
	// OffA and OffB are the symbol's offsets mod 64 in A and B.
	OffA, OffB uint64
	// Before is the first symbol of the shift run holding Symbol: the
	// padding goes just before it. After is the symbol of B just before
	// Before (nil at the start of the section): the padding goes after it.
	Before, After *Symbol
	// Run is the shift run holding Symbol; all its symbols move together,
	// so the padding restores Run.Count symbols' offsets at once.
	Run *Run
	// Go is true when B was built by the Go toolchain, whose linker takes
	// no assembler objects: pad with a function or variable instead.
	Go bool

	sec *Section
}

// ProposePadding computes the padding that restores symbol's offset mod 64
// from build A in build B. An empty symbol picks the top-ranked change whose
// offset mod 64 changed.
func ProposePadding(d *DiffResult, symbol string) (*Padding, error) {
	var c *Change
	if symbol == "" {
		for _, r := range d.Ranked {
			if r.Off64Changed() {
				c = r
				break
			}
		}
		if c == nil {
			return nil, fmt.Errorf("no symbol changed its offset inside its 64-byte line: nothing to pad")
		}
	} else {
		for i := range d.Changes {
			x := &d.Changes[i]
			if x.B.Name == symbol || x.A.Name == symbol {
				c = x
				break
			}
		}
		if c == nil {
			for i := range d.Changes {
				x := &d.Changes[i]
				for _, al := range x.B.Aliases {
					if al == symbol {
						c = x
					}
				}
			}
		}
		if c == nil {
			if len(d.A.Lookup(symbol)) > 0 || len(d.B.Lookup(symbol)) > 0 {
				return nil, fmt.Errorf("symbol %s is in only one of the builds: nothing to restore", symbol)
			}
			return nil, fmt.Errorf("no symbol %s in either build", symbol)
		}
	}
	offA, offB := c.A.Off(LineSize), c.B.Off(LineSize)
	if offA == offB {
		return nil, fmt.Errorf("%s is at offset %d mod 64 in both builds: nothing to pad", c.B.Name, offA)
	}
	p := &Padding{
		Symbol: c.B.Name, Kind: c.B.Kind, Section: c.B.Section.Name,
		Bytes: (offA + LineSize - offB) % LineSize, OffA: offA, OffB: offB,
		Go: d.B.Go, sec: c.B.Section,
	}
	if c.Run >= 0 {
		r := &d.Runs[c.Run]
		p.Run = r
		p.Before = r.First.B
		p.After = r.Prev
	} else {
		p.Before = c.B
	}
	return p, nil
}

// Label returns the name of the padding symbol the assembler file defines.
func (p *Padding) Label() string {
	var b strings.Builder
	b.WriteString("perfbot_pad_")
	for _, r := range p.Symbol {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// sectionDirective returns the GNU as .section line for the padded section.
func (p *Padding) sectionDirective() string {
	name := p.Section
	flags, typ := "a", "@progbits"
	s := p.sec
	switch {
	case s == nil:
		// keep defaults
	case s.Exec:
		flags = "ax"
	case s.Writable:
		flags = "aw"
		if s.NoBits {
			typ = "@nobits"
		}
	}
	if s != nil && s.TLS {
		flags += "T"
	}
	return fmt.Sprintf("\t.section %s,%q,%s", name, flags, typ)
}

// Asm returns a GNU assembler file that inserts the padding: Bytes bytes
// in Section, under a global symbol (see Label), byte-aligned so that it
// adds exactly Bytes before the next object's own alignment. Assemble it
// and link the object before the object that defines Before (see
// LinkerArgs).
func (p *Padding) Asm() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# perfbot layout padding: restores %s to offset %d mod 64 (it is at %d in the new build)\n", p.Symbol, p.OffA, p.OffB)
	fmt.Fprintf(&b, "# by inserting %d bytes into %s", p.Bytes, p.Section)
	if p.Before != nil {
		fmt.Fprintf(&b, " before %s", p.Before.Name)
	}
	if p.After != nil {
		fmt.Fprintf(&b, " (after %s)", p.After.Name)
	}
	b.WriteString(".\n# Assemble: as pad.s -o pad.o (or gcc -c pad.s); link pad.o before the object that defines\n")
	b.WriteString("# that symbol, e.g. first among the program's objects.\n")
	b.WriteString(p.sectionDirective() + "\n")
	b.WriteString("\t.balign 1\n")
	label := p.Label()
	fmt.Fprintf(&b, "\t.globl %s\n", label)
	if p.sec != nil && p.sec.Exec {
		fmt.Fprintf(&b, "\t.type %s, @function\n", label)
	} else {
		fmt.Fprintf(&b, "\t.type %s, @object\n", label)
	}
	fmt.Fprintf(&b, "\t.size %s, %d\n", label, p.Bytes)
	fmt.Fprintf(&b, "%s:\n", label)
	if p.sec != nil && p.sec.Exec {
		fmt.Fprintf(&b, "\t.skip %d, 0xcc\n", p.Bytes) // int3, never executed
	} else {
		fmt.Fprintf(&b, "\t.skip %d\n", p.Bytes)
	}
	b.WriteString("\t.section .note.GNU-stack,\"\",@progbits\n")
	return b.String()
}

// LinkerArgs returns the arguments to add to a C link command (gcc, clang,
// ld) so that the padding object obj, assembled from Asm, is laid out
// first among the program's objects: they go before the other object files
// on the command line. The linker places each object's sections in
// command-line order, so every symbol after the padding in Section moves
// by Bytes (less any absorbed by a later object's alignment).
func (p *Padding) LinkerArgs(obj string) []string {
	return []string{obj}
}

// Instructions returns a few lines telling a developer how to apply the
// padding, for C and Go builds.
func (p *Padding) Instructions() string {
	var b strings.Builder
	fmt.Fprintf(&b, "insert %d bytes into %s", p.Bytes, p.Section)
	if p.Before != nil {
		fmt.Fprintf(&b, " just before %s", p.Before.Name)
	}
	if p.After != nil {
		fmt.Fprintf(&b, " (after %s)", p.After.Name)
	}
	fmt.Fprintf(&b, " to move %s from offset %d back to %d mod 64", p.Symbol, p.OffB, p.OffA)
	if p.Run != nil && p.Run.Count > 1 {
		fmt.Fprintf(&b, "; the %d symbols of its shift run move with it", p.Run.Count)
	}
	b.WriteString(".\n")
	if p.Go {
		if p.Kind == Func {
			b.WriteString("Go build: the Go linker takes no assembler objects; add a function kept alive from init just before the one named above, and tune its size until perfbot layout diff shows the old offset.\n")
		} else {
			fmt.Fprintf(&b, "Go build: declare a %d-byte package-level variable just before the one named above, kept alive from init.\n", p.Bytes)
		}
		return b.String()
	}
	b.WriteString("C build: assemble the .s file (as pad.s -o pad.o) and put pad.o before the other objects on the link command line;\n")
	if p.Kind == Object {
		fmt.Fprintf(&b, "or, in the source, define a %d-byte object next to the one named above (as the kernel debug patch adding a static key did); with gcc, -fno-toplevel-reorder keeps source order.\n", p.Bytes)
	} else {
		b.WriteString("or compile with -falign-functions matching the old build.\n")
	}
	return b.String()
}
