// Source patches: where each function and data object of a build is
// declared, from its DWARF (DW_AT_decl_file, DW_AT_decl_line, and the
// compile unit that defines it).

package layout

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// dwCU is one compile unit: a translation unit.
type dwCU struct {
	name     string // its primary source file, joined with its comp_dir
	producer string // DW_AT_producer: compiler and flags
}

// dwDecl is the declaration of one function or data object with an
// address.
type dwDecl struct {
	name  string
	cu    *dwCU
	file  string // DW_AT_decl_file, as a path
	line  int    // DW_AT_decl_line
	align uint64 // DW_AT_alignment (explicit alignment), 0 when absent
	fn    bool
}

// dwIndex holds the declarations of a build by address.
type dwIndex struct {
	byAddr map[uint64][]*dwDecl
	cus    []*dwCU
}

// errNoDWARF says a build has no DWARF to find declarations in.
var errNoDWARF = errors.New("no DWARF debug information (build with -g)")

// readDWIndex reads every declaration with an address from b's DWARF.
func readDWIndex(b *Binary) (*dwIndex, error) {
	if b.Format != ELF {
		return nil, errors.New("a symbol map holds no DWARF")
	}
	if b.Path == "" {
		return nil, errNoDWARF
	}
	ef, err := elf.Open(b.Path)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	if ef.Section(".debug_info") == nil && ef.Section(".zdebug_info") == nil {
		return nil, errNoDWARF
	}
	d, err := ef.DWARF()
	if err != nil {
		return nil, fmt.Errorf("reading DWARF: %v", err)
	}
	x := &dwIndex{byAddr: map[uint64][]*dwDecl{}}
	var cu *dwCU
	var files []*dwarf.LineFile
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("reading DWARF: %v", err)
		}
		if e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			name, _ := e.Val(dwarf.AttrName).(string)
			dir, _ := e.Val(dwarf.AttrCompDir).(string)
			if name != "" && !filepath.IsAbs(name) && dir != "" {
				name = filepath.Join(dir, name)
			}
			prod, _ := e.Val(dwarf.AttrProducer).(string)
			cu = &dwCU{name: name, producer: prod}
			x.cus = append(x.cus, cu)
			files = nil
			if lr, err := d.LineReader(e); err == nil && lr != nil {
				files = lr.Files()
			}
			continue
		case dwarf.TagSubprogram:
			if pc, ok := e.Val(dwarf.AttrLowpc).(uint64); ok && pc != 0 {
				x.add(d, e, pc, true, cu, files)
			}
			continue // its children may hold function-local statics
		case dwarf.TagVariable:
			if addr, ok := opAddr(e, ef.ByteOrder); ok {
				x.add(d, e, addr, false, cu, files)
			}
		case dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagEnumerationType, dwarf.TagClassType,
			dwarf.TagSubroutineType, dwarf.TagArrayType:
		default:
			continue
		}
		if e.Children {
			r.SkipChildren()
		}
	}
	return x, nil
}

// opAddr returns the address of a variable whose location is a single
// DW_OP_addr (a static or global variable).
func opAddr(e *dwarf.Entry, bo binary.ByteOrder) (uint64, bool) {
	loc, ok := e.Val(dwarf.AttrLocation).([]byte)
	if !ok || len(loc) == 0 || loc[0] != 0x03 {
		return 0, false
	}
	switch len(loc) {
	case 9:
		return bo.Uint64(loc[1:]), true
	case 5:
		return uint64(bo.Uint32(loc[1:])), true
	}
	return 0, false
}

// add records e's declaration at addr, taking the name and declaration
// from the entry it completes (DW_AT_specification, DW_AT_abstract_origin)
// when it has none of its own.
func (x *dwIndex) add(d *dwarf.Data, e *dwarf.Entry, addr uint64, fn bool, cu *dwCU, files []*dwarf.LineFile) {
	decl := &dwDecl{cu: cu, fn: fn}
	for hop := 0; e != nil && hop < 3; hop++ {
		if decl.name == "" {
			decl.name, _ = e.Val(dwarf.AttrName).(string)
		}
		if decl.line == 0 {
			if line, ok := e.Val(dwarf.AttrDeclLine).(int64); ok && line > 0 {
				fi, _ := e.Val(dwarf.AttrDeclFile).(int64)
				if fi >= 0 && int(fi) < len(files) && files[fi] != nil {
					decl.file, decl.line = files[fi].Name, int(line)
				}
			}
		}
		if decl.align == 0 {
			if a, ok := e.Val(dwarf.AttrAlignment).(int64); ok && a > 0 {
				decl.align = uint64(a)
			}
		}
		if decl.name != "" && decl.line != 0 {
			break
		}
		off, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		if !ok {
			off, ok = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		}
		if !ok {
			break
		}
		r := d.Reader()
		r.Seek(off)
		e, _ = r.Next()
	}
	if decl.name == "" {
		return
	}
	x.byAddr[addr] = append(x.byAddr[addr], decl)
}

// lookup returns the declaration of symbol s (or nil): the one at its
// address whose name is s's name, or an alias, or its base name (gcc's
// x.0 for a function-local static x, foo.isra.0 for foo).
func (x *dwIndex) lookup(s *Symbol) *dwDecl {
	ds := x.byAddr[s.Addr]
	names := append([]string{s.Name}, s.Aliases...)
	for _, pass := range []func(string) string{func(n string) string { return n }, BaseName} {
		for _, dcl := range ds {
			for _, n := range names {
				if pass(n) == dcl.name && dcl.fn == (s.Kind == Func) {
					return dcl
				}
			}
		}
	}
	if len(ds) == 1 && ds[0].fn == (s.Kind == Func) {
		return ds[0]
	}
	return nil
}

// order says how the translation unit cu lays out the section sec of b:
// +1 in source order, -1 in reverse source order; how says why. It counts
// cu's symbols there declared in cu's own file for which same is true,
// else those of its sections of the same kind, else guesses from the
// compiler's flags.
func (x *dwIndex) order(b *Binary, cu *dwCU, sec *Section, same func(*Symbol) bool, rel func(string) string) (dir int, how string) {
	var inc, dec int
	count := func(match func(*Section) bool) {
		inc, dec = 0, 0
		prev := -1
		for i := range b.Symbols {
			s := &b.Symbols[i]
			if !match(s.Section) {
				prev = -1
				continue
			}
			if !same(s) {
				continue
			}
			dcl := x.lookup(s)
			if dcl == nil || dcl.cu != cu || rel(dcl.file) != rel(cu.name) {
				continue
			}
			if prev >= 0 && dcl.line != prev {
				if dcl.line > prev {
					inc++
				} else {
					dec++
				}
			}
			prev = dcl.line
		}
	}
	count(func(s *Section) bool { return s == sec })
	if inc == dec {
		count(func(s *Section) bool { return s.Exec == sec.Exec })
	}
	switch {
	case inc > dec:
		return 1, fmt.Sprintf("source order (%d of %d neighbouring pairs of this file's symbols)", inc, inc+dec)
	case dec > inc:
		return -1, fmt.Sprintf("reverse source order (%d of %d neighbouring pairs of this file's symbols)", dec, inc+dec)
	}
	return producerOrder(cu.producer, sec.Exec)
}

// producerOrder guesses gcc's order from the compiler flags alone: -O0
// and -fno-toplevel-reorder keep source order; otherwise gcc (12) emits a
// file's variables in reverse source order and its functions mostly in
// source order (callees it decided to emit early excepted).
func producerOrder(producer string, text bool) (int, string) {
	f := strings.Fields(producer)
	noReorder, opt := false, false
	for _, a := range f {
		switch {
		case a == "-fno-toplevel-reorder":
			noReorder = true
		case strings.HasPrefix(a, "-O") && a != "-O0":
			opt = true
		case a == "-O0":
			opt = false
		}
	}
	switch {
	case noReorder || (!opt && producer != ""):
		return 1, "source order (assumed from the flags: -O0 or -fno-toplevel-reorder)"
	case text:
		return 1, "source order (assumed: gcc emits a file's functions in source order)"
	}
	return -1, "reverse source order (assumed: gcc -O1 and above emits a file's variables in reverse source order)"
}
