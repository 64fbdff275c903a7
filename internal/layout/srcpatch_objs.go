// Source patches without DWARF: the object files beside their sources (an
// in-tree build such as the kernel's) say which translation unit defines
// a symbol, in which input section and in which order; the definition's
// line is then found by name in the source.

package layout

import (
	"cmp"
	"debug/elf"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxObjects bounds how many object files readObjIndex reads.
const maxObjects = 100000

// objSym is one function or object defined by an object file.
type objSym struct {
	obj   *objFile
	name  string
	sec   string // input section, e.g. ".bss" or ".data..read_mostly"
	value uint64 // offset in sec: the compiler's emission order
	fn    bool
}

// objFile is one object file with a source file of the same stem beside
// it.
type objFile struct {
	path string
	src  string // absolute path of the source
	syms []*objSym
}

// objIndex holds the objects' symbols by name.
type objIndex struct {
	byName map[string][]*objSym
	files  int
}

// sourceExts are the source files an object may be compiled from.
var sourceExts = []string{".c", ".cc", ".cpp", ".cxx", ".S"}

// readObjIndex reads the symbol tables of the object files under dir
// that have a source beside them; it skips hidden folders. Files it
// cannot read are skipped.
func readObjIndex(dir string) *objIndex {
	x := &objIndex{byName: map[string][]*objSym{}}
	filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if de.IsDir() {
			if p != dir && strings.HasPrefix(de.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".o") || x.files >= maxObjects {
			return nil
		}
		stem := strings.TrimSuffix(p, ".o")
		for _, ext := range sourceExts {
			if fi, err := os.Stat(stem + ext); err == nil && fi.Mode().IsRegular() {
				x.readObject(p, stem+ext)
				break
			}
		}
		return nil
	})
	return x
}

func (x *objIndex) readObject(path, src string) {
	ef, err := elf.Open(path)
	if err != nil {
		return
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		return
	}
	o := &objFile{path: path, src: src}
	for _, s := range syms {
		t := elf.ST_TYPE(s.Info)
		if (t != elf.STT_FUNC && t != elf.STT_OBJECT) || s.Section == elf.SHN_UNDEF ||
			s.Section >= elf.SHN_LORESERVE || int(s.Section) >= len(ef.Sections) || s.Name == "" {
			continue
		}
		o.syms = append(o.syms, &objSym{obj: o, name: s.Name, sec: ef.Sections[s.Section].Name, value: s.Value, fn: t == elf.STT_FUNC})
	}
	slices.SortFunc(o.syms, func(a, b *objSym) int {
		if c := strings.Compare(a.sec, b.sec); c != 0 {
			return c
		}
		return cmp.Compare(a.value, b.value)
	})
	for _, s := range o.syms {
		x.byName[s.name] = append(x.byName[s.name], s)
	}
	x.files++
}

// inputOf reports whether input section in is laid out in output section
// out by the usual linker scripts: .bss.x and .bss..page_aligned in .bss,
// .text.unlikely in .text, and so on.
func inputOf(out, in string) bool {
	return in == out || strings.HasPrefix(in, out+".")
}

// find returns the object symbol for s of a build: defined under s's name
// (or an alias) in an input section of s's section, from source tu when
// tu is set, from a source named s.File for a local symbol. ambiguous is
// true when several objects qualify (the first is returned).
func (x *objIndex) find(s *Symbol, tu string) (o *objSym, ambiguous bool) {
	if x == nil {
		return nil, false
	}
	var found []*objSym
	for _, n := range append([]string{s.Name}, s.Aliases...) {
		for _, c := range x.byName[n] {
			if !inputOf(s.Section.Name, c.sec) || c.fn != (s.Kind == Func) {
				continue
			}
			if tu != "" && c.obj.src != tu {
				continue
			}
			if s.Local && s.File != "" && filepath.Base(c.obj.src) != s.File {
				continue
			}
			found = append(found, c)
		}
		if len(found) > 0 {
			break
		}
	}
	if len(found) == 0 {
		return nil, false
	}
	return found[0], len(found) > 1
}

// order says how the object lays out input section sec, from the source
// lines (found by name in f) of its symbols there in address order: +1
// source order, -1 reverse, 0 unknown.
func (o *objFile) order(sec string, f *cFile) (inc, dec int) {
	prev := -1
	for _, s := range o.syms {
		if s.sec != sec {
			continue
		}
		l := f.findDef(BaseName(s.name), s.fn)
		if l < 0 {
			continue
		}
		if prev >= 0 && l != prev {
			if l > prev {
				inc++
			} else {
				dec++
			}
		}
		prev = l
	}
	return inc, dec
}
