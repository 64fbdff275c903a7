// Package layout explains how code and data moved between two builds of a
// program: which functions, loops and objects changed their position inside
// 64-byte cache lines, and where each shift started.
//
// The work has four steps:
//
//  1. [Open] reads every function and data object of an ELF file (or a
//     kernel System.map or `nm` listing) into a [Binary].
//  2. [Diff] matches the symbols of two Binaries by name and computes, for
//     each, its shift and its offsets mod 32, 64 and 4096 in both builds,
//     the lines it touches, the shift runs with their causes, the writable
//     objects that gained or lost a shared cache line, and the loops of hot
//     functions. It traces every shift run to its root: a run whose shift
//     only re-rounds the one before it (padding that absorbed or doubled
//     it) to the run whose own change started it.
//  3. The changes are ranked by profile hotness when a profile is given,
//     else by how much the symbol's alignment class changed, and the root
//     changes by their top-ranked victim.
//  4. [ProposePadding] computes the bytes to insert so that a symbol gets
//     back the cache-line offset it had in the first build, and writes them
//     as an assembler file a C build can link.
//
// A [Binary] holds its sections ([Section]) and symbols ([Symbol]). A
// [DiffResult] holds a [Change] for each symbol found in both builds (with
// a [LoopChange] for each loop when analysed), the shift runs ([Run]) with
// the [Cause] of each and its trace, the root changes ([RootChange]) that
// group them, the false-sharing candidates ([SharedLine]) and the ranking;
// a [Padding] is a restore proposal.
//
// Package report prints a [DiffResult] as text or JSON.
package layout

import (
	"fmt"
	"io"
	"strings"
)

// LineSize is the cache-line size the package reasons about (x86-64 and
// most arm64 cores).
const LineSize = 64

// Kind says what a symbol is.
type Kind uint8

// Symbol kinds.
const (
	Func   Kind = iota // code: a function or an assembly entry point
	Object             // data: a variable, array or constant
)

// String returns "func" or "object".
func (k Kind) String() string {
	if k == Func {
		return "func"
	}
	return "object"
}

// Symbol is one function or data object of a build.
type Symbol struct {
	Name    string
	Addr    uint64
	Size    uint64
	Section *Section
	Kind    Kind
	// Local is true for file-local (static) symbols.
	Local bool
	// File is the source file a local symbol belongs to, from the symbol
	// table's STT_FILE entries; "" when unknown.
	File string
	// Aliases are other names at the same address and size.
	Aliases []string
	// SizeGuessed is true when the size was derived from the next symbol's
	// address (System.map input), so it may include padding.
	SizeGuessed bool

	ord       int32 // position in the symbol table, for matching duplicates
	bind, typ uint8 // ELF binding and type (0 for symbol maps)
}

// End returns the address just past the symbol.
func (s *Symbol) End() uint64 { return s.Addr + s.Size }

// Off returns the symbol's address modulo n (32, 64, 4096, ...).
func (s *Symbol) Off(n uint64) uint64 { return s.Addr % n }

// Lines returns how many 64-byte lines the symbol touches (0 for an
// empty symbol).
func (s *Symbol) Lines() int { return linesTouched(s.Addr, s.Size) }

// Straddles reports whether the symbol touches more 64-byte lines than its
// size needs: an object of 64 bytes or less that crosses a line, or a
// larger one that starts off a line boundary and so needs one more line.
func (s *Symbol) Straddles() bool {
	if s.Size == 0 {
		return false
	}
	return uint64(s.Lines()) > (s.Size+LineSize-1)/LineSize
}

// Writable reports whether the symbol is in a writable, non-TLS data
// section that the program writes after start-up: the objects that can
// suffer false sharing. Sections made read-only after relocation (RELRO:
// .data.rel.ro, .got, .init_array, ...) do not count.
func (s *Symbol) Writable() bool {
	sec := s.Section
	if sec == nil || !sec.Writable || sec.TLS || sec.Exec {
		return false
	}
	switch sec.Name {
	case ".got", ".init_array", ".fini_array", ".preinit_array", ".dynamic", ".ctors", ".dtors", ".tm_clone_table":
		return false
	}
	return !strings.HasPrefix(sec.Name, ".data.rel.ro")
}

func linesTouched(addr, size uint64) int {
	if size == 0 {
		return 0
	}
	last := addr + size - 1
	if last < addr { // wraps: clamp
		last = ^uint64(0)
	}
	return int(last/LineSize - addr/LineSize + 1)
}

// Section is one allocated section of a build (or, for System.map input,
// one class of symbols such as ".text" or ".bss").
type Section struct {
	Name     string
	Addr     uint64
	Size     uint64
	Exec     bool
	Writable bool
	TLS      bool
	NoBits   bool // occupies no file space (.bss)
	// Align is the section's alignment (sh_addralign), 0 when unknown.
	Align uint64

	index  int    // position in Binary.Sections
	offset uint64 // file offset of the section's bytes
}

// Label is an untyped, empty ELF symbol: a name for an address.
type Label struct {
	Name    string
	Addr    uint64
	Section *Section
}

// Format is the kind of input a [Binary] was read from.
type Format string

// Input formats.
const (
	ELF       Format = "elf"        // an ELF file
	SystemMap Format = "system.map" // a kernel System.map or `nm` listing
)

// FileType says what kind of file a [Binary] is.
type FileType string

// File types.
const (
	Executable        FileType = "executable"
	PIEExecutable     FileType = "PIE executable"
	SharedLibrary     FileType = "shared library"
	RelocatableObject FileType = "relocatable object"
	SymbolMap         FileType = "symbol map" // System.map input
)

// Binary is the layout of one build: its allocated sections and their
// functions and objects.
type Binary struct {
	// Path is the file the layout was read from.
	Path string
	// Format is ELF or SystemMap.
	Format Format
	// Arch is the machine, e.g. "x86-64", "aarch64"; "" when unknown.
	Arch string
	// Type is Executable, PIEExecutable, SharedLibrary,
	// RelocatableObject or, for System.map input, SymbolMap.
	Type FileType
	// PIE is true for position-independent executables.
	PIE bool
	// Static is true for statically linked executables (including
	// static-pie).
	Static bool
	// Go is true for binaries built by the Go toolchain.
	Go bool
	// Sections lists the allocated sections in header order.
	Sections []*Section
	// Symbols holds the functions and objects, sorted by section and
	// address. Symbols sharing an address and size are merged into one
	// (see Symbol.Aliases).
	Symbols []Symbol
	// Labels are the ELF symbols with no type and no size (such as
	// __start___param or the start of a table written in assembler), by
	// address; a name defined twice is left out. They are not compared
	// as symbols: the trace uses them as points whose shift is known
	// inside data that has no sized symbols. Empty for symbol maps.
	Labels []Label

	machine uint16      // elf.Machine, for the disassembler
	ra      io.ReaderAt // the open file, when read with Read
	src     *sourceTable
}

// Describe returns a one-line description: format, arch, type, linking.
func (b *Binary) Describe() string {
	var parts []string
	if b.Format == SystemMap {
		parts = append(parts, "symbol map")
	} else {
		if b.Arch != "" {
			parts = append(parts, "ELF "+b.Arch)
		} else {
			parts = append(parts, "ELF")
		}
		parts = append(parts, string(b.Type))
		if b.Type != RelocatableObject && b.Type != SharedLibrary {
			if b.Static {
				parts = append(parts, "static")
			} else {
				parts = append(parts, "dynamic")
			}
		}
		if b.Go {
			parts = append(parts, "Go")
		}
	}
	parts = append(parts, fmt.Sprintf("%d symbols", len(b.Symbols)))
	return strings.Join(parts, ", ")
}

// Lookup returns the symbols called name (or having it as an alias).
func (b *Binary) Lookup(name string) []*Symbol {
	var out []*Symbol
	for i := range b.Symbols {
		s := &b.Symbols[i]
		if s.Name == name {
			out = append(out, s)
			continue
		}
		for _, a := range s.Aliases {
			if a == name {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// section returns the section called name, or nil.
func (b *Binary) section(name string) *Section {
	for _, s := range b.Sections {
		if s.Name == name {
			return s
		}
	}
	return nil
}
