package layout

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// maxGuessedSize bounds a size derived from the next symbol's address: a
// bigger gap means the next symbol is in another region, and the size is
// left unknown (0).
const maxGuessedSize = 256 << 20

// readSymbolMap parses a kernel System.map or `nm` listing: lines of
//
//	ADDRESS TYPE NAME          (System.map, nm)
//	ADDRESS SIZE TYPE NAME     (nm -S)
//
// with hexadecimal ADDRESS and SIZE and an nm type letter. Undefined and
// absolute symbols are skipped. Without sizes, each symbol's size is the
// distance to the next higher address.
func readSymbolMap(r io.Reader) (*Binary, error) {
	b := &Binary{Format: SystemMap, Type: SymbolMap}
	secs := map[string]*Section{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	lineNo := 0
	haveSizes := false
	var syms []Symbol
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if lineNo == 1 && !looksLikeSymbolLine(line) {
			return nil, ErrFormat
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) == 1 && strings.HasSuffix(f[0], ":") {
			continue // "file.o:" header of nm on several files
		}
		if len(f) == 2 && len(f[0]) == 1 {
			continue // "U name": undefined, no address
		}
		if len(f) >= 4 && strings.HasPrefix(f[len(f)-1], "[") {
			f = f[:len(f)-1] // /proc/kallsyms module tag
		}
		var sizeField string
		switch len(f) {
		case 3:
		case 4:
			sizeField = f[1]
			f = []string{f[0], f[2], f[3]}
		default:
			return nil, fmt.Errorf("line %d: want \"ADDRESS TYPE NAME\" or \"ADDRESS SIZE TYPE NAME\", got %q", lineNo, clip(line))
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: bad address %q", lineNo, clip(f[0]))
		}
		if len(f[1]) != 1 {
			return nil, fmt.Errorf("line %d: bad symbol type %q (want one nm letter)", lineNo, clip(f[1]))
		}
		var size uint64
		if sizeField != "" {
			size, err = strconv.ParseUint(sizeField, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: bad size %q", lineNo, clip(sizeField))
			}
			haveSizes = true
		}
		letter := f[1][0]
		secName, kind, writable, ok := nmClass(letter)
		if !ok {
			continue
		}
		sec := secs[secName]
		if sec == nil {
			sec = &Section{Name: secName, Addr: addr, Exec: kind == Func, Writable: writable, NoBits: secName == ".bss"}
			secs[secName] = sec
		}
		local := letter >= 'a' && letter <= 'z'
		bind := uint8(elf.STB_GLOBAL)
		switch {
		case local:
			bind = uint8(elf.STB_LOCAL)
		case letter == 'W' || letter == 'V':
			bind = uint8(elf.STB_WEAK)
		}
		syms = append(syms, Symbol{
			Name: f[2], Addr: addr, Size: size, Section: sec, Kind: kind,
			Local: local, ord: int32(len(syms)), bind: bind,
		})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %v", lineNo+1, err)
	}
	if len(syms) == 0 {
		if lineNo == 0 {
			return nil, fmt.Errorf("empty file: %w", ErrFormat)
		}
		return nil, fmt.Errorf("symbol listing holds no functions or objects")
	}
	splitPerCPU(syms, secs)
	if !haveSizes {
		guessSizes(syms)
	}
	// Section extents, then section order by address.
	for _, sec := range secs {
		sec.Addr, sec.Size = ^uint64(0), 0
	}
	for i := range syms {
		s := &syms[i]
		if s.Addr < s.Section.Addr {
			s.Section.Addr = s.Addr
		}
	}
	for i := range syms {
		s := &syms[i]
		if e := s.End() - s.Section.Addr; s.End() >= s.Addr && e > s.Section.Size {
			s.Section.Size = e
		}
	}
	for _, sec := range secs {
		b.Sections = append(b.Sections, sec)
	}
	sort.Slice(b.Sections, func(i, j int) bool {
		if b.Sections[i].Addr != b.Sections[j].Addr {
			return b.Sections[i].Addr < b.Sections[j].Addr
		}
		return b.Sections[i].Name < b.Sections[j].Name
	})
	for i, sec := range b.Sections {
		sec.index = i
	}
	b.Symbols = mergeAliases(syms)
	return b, nil
}

// looksLikeSymbolLine reports whether line could start a symbol listing,
// so binary garbage is refused as a format error rather than a parse
// error at line 1.
func looksLikeSymbolLine(line string) bool {
	f := strings.Fields(line)
	if len(f) == 0 {
		return strings.TrimSpace(line) == "" && len(line) < 256
	}
	if len(f) == 1 && strings.HasSuffix(f[0], ":") {
		return true
	}
	if len(f) == 2 && len(f[0]) == 1 {
		return true
	}
	if len(f) < 3 || len(f) > 5 {
		return false
	}
	_, err := strconv.ParseUint(f[0], 16, 64)
	return err == nil
}

// nmClass maps an nm type letter to a section name, kind and
// writability; ok is false for symbols that take no space (undefined,
// absolute, debugging).
func nmClass(c byte) (sec string, kind Kind, writable, ok bool) {
	switch c {
	case 'T', 't', 'W', 'i', 'I':
		return ".text", Func, false, true
	case 'D', 'd', 'G', 'g', 'V', 'v', 'u':
		return ".data", Object, true, true
	case 'B', 'b', 'S', 's':
		return ".bss", Object, true, true
	case 'R', 'r', 'n':
		return ".rodata", Object, false, true
	}
	return "", 0, false, false
}

// splitPerCPU moves kernel per-CPU variables (between __per_cpu_start and
// __per_cpu_end, small offsets rather than addresses) into their own
// section, so they are neither sized nor grouped with ordinary data.
func splitPerCPU(syms []Symbol, secs map[string]*Section) {
	var start, end *Symbol
	for i := range syms {
		switch syms[i].Name {
		case "__per_cpu_start":
			start = &syms[i]
		case "__per_cpu_end":
			end = &syms[i]
		}
	}
	if start == nil || end == nil || end.Addr < start.Addr {
		return
	}
	sec := &Section{Name: ".data..percpu", Addr: start.Addr, Writable: true}
	secs[sec.Name] = sec
	for i := range syms {
		s := &syms[i]
		if s.Addr >= start.Addr && s.Addr < end.Addr && s.Kind == Object {
			s.Section = sec
		}
	}
}

// guessSizes sets each symbol's size to the distance to the next higher
// address of any symbol, when that symbol is in the same section (the next
// symbol usually starts where this one, plus its padding, ends). Linker
// markers such as _etext or __bss_start get size 0.
func guessSizes(syms []Symbol) {
	idx := make([]int32, len(syms))
	for i := range idx {
		idx[i] = int32(i)
	}
	sort.Slice(idx, func(i, j int) bool { return syms[idx[i]].Addr < syms[idx[j]].Addr })
	for k := 0; k < len(idx); {
		addr := syms[idx[k]].Addr
		j := k + 1
		for j < len(idx) && syms[idx[j]].Addr == addr {
			j++
		}
		for ; k < j; k++ {
			s := &syms[idx[k]]
			if isMarker(s.Name) {
				continue
			}
			s.SizeGuessed = true
			if j < len(idx) && syms[idx[j]].Section == s.Section {
				if gap := syms[idx[j]].Addr - addr; gap <= maxGuessedSize {
					s.Size = gap
				}
			}
		}
	}
}

// isMarker reports whether name is a linker-script marker of a kernel
// symbol map: a section boundary, not an object.
func isMarker(name string) bool {
	switch name {
	case "_text", "_stext", "_etext", "_sdata", "_edata", "__bss_start", "__bss_stop", "_end",
		"__per_cpu_start", "__per_cpu_end", "__init_begin", "__init_end", "_sinittext", "_einittext",
		"__start_rodata", "__end_rodata", "_sbss", "_ebss", "__data_start", "_data":
		return true
	}
	return strings.HasPrefix(name, "__start_") || strings.HasPrefix(name, "__stop_") ||
		strings.HasPrefix(name, "__end_") || strings.HasPrefix(name, "__begin_")
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
