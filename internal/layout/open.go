package layout

import (
	"bytes"
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unsafe"
)

// ErrStripped is returned (wrapped) by [Open] for an ELF file without a
// symbol table.
var ErrStripped = errors.New("no symbol table: the binary is stripped (go build -ldflags=-s or strip); rebuild without -s")

// ErrFormat is returned (wrapped) by [Open] for input that is neither an
// ELF file nor a System.map-style symbol listing.
var ErrFormat = errors.New("not an ELF file or a System.map/nm symbol listing")

// ErrTruncated is returned (wrapped) by [Open] for an ELF file that ends
// before the data its headers describe.
var ErrTruncated = errors.New("truncated ELF file")

// Open reads the layout of the ELF file or System.map-style listing at
// path. Errors name the path and what was wrong; see [ErrStripped],
// [ErrFormat] and [ErrTruncated].
func Open(path string) (*Binary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a binary", path)
	}
	b, err := Read(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b.Path = path
	b.ra = nil // reopened on demand by code reads
	return b, nil
}

// Read is [Open] on an already open file of the given size. The Binary
// keeps r to read function code later (for loops); Path is left empty.
func Read(r io.ReaderAt, size int64) (*Binary, error) {
	var magic [4]byte
	n, err := r.ReadAt(magic[:], 0)
	if n == 0 && size == 0 {
		return nil, fmt.Errorf("empty file: %w", ErrFormat)
	}
	if n < 4 && err != nil && size >= 4 {
		return nil, err
	}
	if bytes.Equal(magic[:n], []byte(elf.ELFMAG)) && n == 4 {
		b, err := readELF(r, size)
		if err != nil {
			return nil, err
		}
		b.ra = r
		return b, nil
	}
	return readSymbolMap(io.NewSectionReader(r, 0, size))
}

func readELF(r io.ReaderAt, size int64) (*Binary, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: the file (%d bytes) ends before the headers it describes", ErrTruncated, size)
		}
		return nil, fmt.Errorf("bad ELF file: %v", err)
	}
	b := &Binary{Format: ELF, Arch: archName(f.Machine), machine: uint16(f.Machine)}

	var hasInterp, hasDynamic bool
	var tlsAddr uint64
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			hasInterp = true
		case elf.PT_DYNAMIC:
			hasDynamic = true
		case elf.PT_TLS:
			tlsAddr = p.Vaddr
		}
	}
	switch f.Type {
	case elf.ET_EXEC:
		b.Type = Executable
		b.Static = !hasInterp
	case elf.ET_DYN:
		pieFlag := false
		if hasDynamic {
			if v, err := f.DynValue(elf.DT_FLAGS_1); err == nil {
				for _, x := range v {
					if elf.DynFlag1(x)&elf.DF_1_PIE != 0 {
						pieFlag = true
					}
				}
			}
		}
		switch {
		case hasInterp:
			b.Type, b.PIE = PIEExecutable, true
		case pieFlag:
			b.Type, b.PIE, b.Static = PIEExecutable, true, true
		default:
			b.Type = SharedLibrary
		}
	case elf.ET_REL:
		b.Type = RelocatableObject
	default:
		return nil, fmt.Errorf("unsupported ELF type %v", f.Type)
	}

	// Allocated sections; secByIndex maps ELF section index to ours.
	secByIndex := make([]*Section, len(f.Sections))
	var symtab, shndxSec *elf.Section
	for i, s := range f.Sections {
		switch s.Type {
		case elf.SHT_SYMTAB:
			symtab = s
		case elf.SHT_SYMTAB_SHNDX:
			shndxSec = s
		}
		if s.Name == ".go.buildinfo" || s.Name == ".gopclntab" || s.Name == ".note.go.buildid" {
			b.Go = true
		}
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NULL {
			continue
		}
		sec := &Section{
			Name:     s.Name,
			Addr:     s.Addr,
			Size:     s.Size,
			Exec:     s.Flags&elf.SHF_EXECINSTR != 0,
			Writable: s.Flags&elf.SHF_WRITE != 0,
			TLS:      s.Flags&elf.SHF_TLS != 0,
			NoBits:   s.Type == elf.SHT_NOBITS,
			Align:    s.Addralign,
			index:    len(b.Sections),
			offset:   s.Offset,
		}
		secByIndex[i] = sec
		b.Sections = append(b.Sections, sec)
	}
	if symtab == nil {
		if f.Section(".dynsym") != nil {
			return nil, fmt.Errorf("%w (only the dynamic symbol table .dynsym is left)", ErrStripped)
		}
		return nil, ErrStripped
	}
	if int(symtab.Link) >= len(f.Sections) || symtab.Link == 0 {
		return nil, fmt.Errorf("bad ELF file: symbol table links to section %d, which does not exist", symtab.Link)
	}
	strSec := f.Sections[symtab.Link]
	symData, err := sectionBytes(symtab, size)
	if err != nil {
		return nil, err
	}
	strData, err := sectionBytes(strSec, size)
	if err != nil {
		return nil, err
	}
	var shndx []byte
	if shndxSec != nil && int(shndxSec.Link) < len(f.Sections) && f.Sections[shndxSec.Link] == symtab {
		if shndx, err = sectionBytes(shndxSec, size); err != nil {
			return nil, err
		}
	}
	// The names are substrings of the string table, which is never
	// written after this point: share its bytes rather than copy them.
	var strtab string
	if len(strData) > 0 {
		strtab = unsafe.String(&strData[0], len(strData))
	}
	syms, labels, err := parseSymtab(f, symData, strtab, shndx, secByIndex, tlsAddr)
	if err != nil {
		return nil, err
	}
	if len(syms) == 0 {
		return nil, fmt.Errorf("%w (the symbol table holds no functions or objects)", ErrStripped)
	}
	b.Symbols = mergeAliases(syms)
	b.Labels = uniqueLabels(labels)
	return b, nil
}

// sectionBytes reads a section's contents, checking first that it lies
// inside the file so that a corrupt header cannot make us allocate more
// than the file holds.
func sectionBytes(s *elf.Section, size int64) ([]byte, error) {
	if s.Type == elf.SHT_NOBITS {
		return nil, fmt.Errorf("bad ELF file: section %s has no data", s.Name)
	}
	if s.Flags&elf.SHF_COMPRESSED != 0 {
		return nil, fmt.Errorf("bad ELF file: section %s is compressed", s.Name)
	}
	if s.Offset > uint64(size) || s.Size > uint64(size)-s.Offset {
		return nil, fmt.Errorf("%w: section %s (offset %d, %d bytes) extends past the end of the file (%d bytes)",
			ErrTruncated, s.Name, s.Offset, s.Size, size)
	}
	buf := make([]byte, s.Size)
	if _, err := s.ReadAt(buf, 0); err != nil && !(err == io.EOF && s.Size == 0) {
		return nil, fmt.Errorf("%w: reading section %s: %v", ErrTruncated, s.Name, err)
	}
	return buf, nil
}

// ELF symbol types and special section indices used below.
const (
	sttNoType   = 0
	sttObject   = 1
	sttFunc     = 2
	sttSection  = 3
	sttFile     = 4
	sttTLS      = 6
	sttGNUIFunc = 10

	shnUndef     = 0
	shnLoReserve = 0xff00
	shnXIndex    = 0xffff
)

func parseSymtab(f *elf.File, data []byte, strtab string, shndx []byte, secByIndex []*Section, tlsAddr uint64) ([]Symbol, []Label, error) {
	bo := f.ByteOrder
	entSize := 24
	if f.Class == elf.ELFCLASS32 {
		entSize = 16
	}
	if len(data)%entSize != 0 {
		return nil, nil, fmt.Errorf("bad ELF file: symbol table size %d is not a multiple of %d", len(data), entSize)
	}
	n := len(data) / entSize
	syms := make([]Symbol, 0, n)
	var labels []Label
	file := ""
	for i := 1; i < n; i++ { // entry 0 is the null symbol
		e := data[i*entSize : (i+1)*entSize]
		var nameOff uint32
		var info uint8
		var sh uint16
		var value, size uint64
		if entSize == 24 {
			nameOff = bo.Uint32(e[0:])
			info = e[4]
			sh = bo.Uint16(e[6:])
			value = bo.Uint64(e[8:])
			size = bo.Uint64(e[16:])
		} else {
			nameOff = bo.Uint32(e[0:])
			value = uint64(bo.Uint32(e[4:]))
			size = uint64(bo.Uint32(e[8:]))
			info = e[12]
			sh = bo.Uint16(e[14:])
		}
		typ, bind := info&0xf, info>>4
		name := cString(strtab, nameOff)
		if typ == sttFile {
			file = name
			continue
		}
		if typ == sttSection || name == "" {
			continue
		}
		if typ != sttNoType && typ != sttObject && typ != sttFunc && typ != sttTLS && typ != sttGNUIFunc {
			continue
		}
		secIdx := uint32(sh)
		if sh == shnXIndex {
			if len(shndx) < (i+1)*4 {
				continue
			}
			secIdx = bo.Uint32(shndx[i*4:])
		} else if sh == shnUndef || sh >= shnLoReserve {
			continue
		}
		if int(secIdx) >= len(secByIndex) || secByIndex[secIdx] == nil {
			continue
		}
		sec := secByIndex[secIdx]
		if name[0] == '$' || strings.HasPrefix(name, ".L") {
			continue // mapping symbols and assembler-local labels
		}
		if typ == sttNoType && size == 0 {
			// a label, such as _end or __bss_start
			labels = append(labels, Label{Name: name, Addr: value, Section: sec})
			continue
		}
		addr := value
		if typ == sttTLS && f.Type != elf.ET_REL {
			addr = tlsAddr + value
		}
		kind := Object
		if typ == sttFunc || typ == sttGNUIFunc || (typ == sttNoType && sec.Exec) {
			kind = Func
		}
		s := Symbol{
			Name: name, Addr: addr, Size: size, Section: sec, Kind: kind,
			Local: bind == uint8(elf.STB_LOCAL), ord: int32(i), bind: bind, typ: typ,
		}
		if s.Local {
			s.File = file
		}
		syms = append(syms, s)
	}
	return syms, labels, nil
}

// uniqueLabels sorts labels by address and leaves out the names defined
// more than once (local labels of several files), which cannot be matched
// across builds.
func uniqueLabels(labels []Label) []Label {
	slices.SortFunc(labels, func(x, y Label) int { return strings.Compare(x.Name, y.Name) })
	out := labels[:0]
	for i := 0; i < len(labels); {
		j := i + 1
		for j < len(labels) && labels[j].Name == labels[i].Name {
			j++
		}
		if j == i+1 {
			out = append(out, labels[i])
		}
		i = j
	}
	slices.SortStableFunc(out, func(x, y Label) int { return cmp.Compare(x.Addr, y.Addr) })
	return slices.Clip(out)
}

// cString returns the NUL-terminated string at off in tab ("" when off is
// out of range).
func cString(tab string, off uint32) string {
	if int64(off) >= int64(len(tab)) {
		return ""
	}
	s := tab[off:]
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return s
}

// mergeAliases returns syms sorted by section and address, with symbols
// that share section, address and size merged into one under the
// preferred name.
func mergeAliases(syms []Symbol) []Symbol {
	// Sort indices, not the 100-byte symbols themselves.
	idx := make([]int32, len(syms))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(i, j int32) int {
		a, b := &syms[i], &syms[j]
		if c := cmp.Compare(a.Section.index, b.Section.index); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Addr, b.Addr); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Size, b.Size); c != 0 {
			return c // a label before the object at its address
		}
		if preferName(a, b) {
			return -1
		}
		if preferName(b, a) {
			return 1
		}
		return 0
	})
	out := make([]Symbol, 0, len(syms))
	for i := 0; i < len(idx); {
		first := &syms[idx[i]]
		j := i + 1
		for j < len(idx) {
			o := &syms[idx[j]]
			if o.Section != first.Section || o.Addr != first.Addr || o.Size != first.Size {
				break
			}
			j++
		}
		s := *first
		for k := i + 1; k < j; k++ {
			if n := syms[idx[k]].Name; n != s.Name {
				s.Aliases = append(s.Aliases, n)
			}
		}
		out = append(out, s)
		i = j
	}
	return out
}

// preferName orders aliases: global before weak before local, typed before
// untyped, fewer leading underscores, shorter, then alphabetical; the
// first is kept as the symbol's name, so both builds of a pair choose alike.
// In symbol maps (all untyped), where markers such as __bss_start share
// addresses with real objects, fewer leading underscores come first.
func preferName(a, b *Symbol) bool {
	rank := func(s *Symbol) int {
		switch elf.SymBind(s.bind) {
		case elf.STB_GLOBAL:
			return 0
		case elf.STB_WEAK:
			return 1
		}
		return 2
	}
	ua := len(a.Name) - len(strings.TrimLeft(a.Name, "_"))
	ub := len(b.Name) - len(strings.TrimLeft(b.Name, "_"))
	if a.typ == sttNoType && b.typ == sttNoType && ua != ub {
		return ua < ub
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra < rb
	}
	if ta, tb := a.typ != sttNoType, b.typ != sttNoType; ta != tb {
		return ta
	}
	if ua != ub {
		return ua < ub
	}
	if len(a.Name) != len(b.Name) {
		return len(a.Name) < len(b.Name)
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.ord < b.ord
}

func archName(m elf.Machine) string {
	switch m {
	case elf.EM_X86_64:
		return "x86-64"
	case elf.EM_386:
		return "x86"
	case elf.EM_AARCH64:
		return "aarch64"
	case elf.EM_ARM:
		return "arm"
	case elf.EM_RISCV:
		return "riscv"
	case elf.EM_PPC64:
		return "ppc64"
	case elf.EM_S390:
		return "s390x"
	}
	return strings.ToLower(strings.TrimPrefix(m.String(), "EM_"))
}

// code returns the bytes of symbol s, read from the file.
func (b *Binary) code(s *Symbol) ([]byte, error) {
	if b.Format != ELF {
		return nil, errors.New("no code in a symbol map")
	}
	sec := s.Section
	if sec == nil || sec.NoBits {
		return nil, fmt.Errorf("section of %s holds no code", s.Name)
	}
	if s.Size == 0 {
		return nil, nil
	}
	if s.Addr < sec.Addr || s.Size > sec.Size || s.Addr-sec.Addr > sec.Size-s.Size {
		return nil, fmt.Errorf("%s [%#x,+%d) lies outside its section %s", s.Name, s.Addr, s.Size, sec.Name)
	}
	if s.Size > 64<<20 {
		return nil, fmt.Errorf("%s is %d bytes: too big to disassemble", s.Name, s.Size)
	}
	r := b.ra
	if r == nil {
		f, err := os.Open(b.Path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	buf := make([]byte, s.Size)
	if _, err := r.ReadAt(buf, int64(sec.offset+(s.Addr-sec.Addr))); err != nil {
		return nil, fmt.Errorf("reading code of %s: %v", s.Name, err)
	}
	return buf, nil
}
