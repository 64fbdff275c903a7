// Source patches: finding the spot in the source, from DWARF or from the
// object files and the symbols' names.

package layout

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// site is where a symbol of the new build is defined.
type site struct {
	tu    string // the translation unit's primary source, relative to the source folder; "" unknown
	file  string // the file holding the definition, relative; "" unknown
	line  int    // 1-based; 0 unknown
	inSec string // the input section, "" unknown
	cu    *dwCU
	obj   *objSym
}

// inTU reports whether the site is a definition in tu's own file (not in
// a header it includes).
func (s site) inTU(tu string) bool { return tu != "" && s.tu == tu && s.file == tu && s.line > 0 }

// placer finds sites in a source folder.
type placer struct {
	srcDir       string
	old, new     *Binary
	dwOld, dwNew *dwIndex
	objs         *objIndex
	rels         map[string]string
	files        map[string]*cFile
	notes        []string
}

func newPlacer(old, new *Binary, srcDir, objDir string) *placer {
	pl := &placer{srcDir: srcDir, old: old, new: new, rels: map[string]string{}, files: map[string]*cFile{}}
	pl.dwOld, _ = readDWIndex(old)
	var err error
	if pl.dwNew, err = readDWIndex(new); err != nil {
		pl.notes = append(pl.notes, fmt.Sprintf("the new build: %v: the spot is found from the object files and the symbols' names", err))
	}
	if objDir != "" {
		pl.objs = readObjIndex(objDir)
	}
	return pl
}

// rel maps a path from a build's DWARF (absolute, perhaps from another
// checkout of the same tree) to a path relative to the source folder: the
// path itself when it lies there, else its longest tail that names a file
// there. "" when none does.
func (pl *placer) rel(p string) string {
	if p == "" {
		return ""
	}
	if r, ok := pl.rels[p]; ok {
		return r
	}
	out := ""
	if r, err := filepath.Rel(pl.srcDir, p); err == nil && !strings.HasPrefix(r, "..") && fileExists(filepath.Join(pl.srcDir, r)) {
		out = r
	} else {
		parts := strings.Split(filepath.ToSlash(p), "/")
		for i := range parts {
			cand := filepath.Join(parts[i:]...)
			if cand != "" && fileExists(filepath.Join(pl.srcDir, cand)) {
				out = cand
				break
			}
		}
	}
	pl.rels[p] = out
	return out
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// cfile returns the scanned source file rel.
func (pl *placer) cfile(rel string) (*cFile, error) {
	if f := pl.files[rel]; f != nil {
		return f, nil
	}
	src, err := os.ReadFile(filepath.Join(pl.srcDir, rel))
	if err != nil {
		return nil, err
	}
	f := scanC(src)
	pl.files[rel] = f
	return f, nil
}

// objRel maps an object's source (absolute) to a relative path.
func (pl *placer) objRel(o *objSym) string {
	if o == nil {
		return ""
	}
	return pl.rel(o.obj.src)
}

// siteOf finds where symbol s of the new build is defined; tu, when set,
// restricts the object-file search to that translation unit.
func (pl *placer) siteOf(s *Symbol, tu string) site {
	var st site
	if s == nil {
		return st
	}
	if pl.dwNew != nil {
		if d := pl.dwNew.lookup(s); d != nil {
			st.cu, st.tu, st.file, st.line = d.cu, pl.rel(d.cu.name), pl.rel(d.file), d.line
		}
	}
	objTU := ""
	if tu != "" {
		objTU = filepath.Join(pl.srcDir, tu)
	}
	o, amb := pl.objs.find(s, objTU)
	if o != nil {
		st.obj, st.inSec = o, o.sec
		if st.tu == "" {
			st.tu, st.file = pl.objRel(o), pl.objRel(o)
			if amb {
				pl.notes = append(pl.notes, fmt.Sprintf("%s is defined in several object files; took %s", s.Name, st.tu))
			}
			if f, err := pl.cfile(st.tu); err == nil {
				if l := f.findDef(BaseName(s.Name), s.Kind == Func); l >= 0 {
					st.line = l + 1
				}
			}
		}
	}
	return st
}

// removedTU returns the translation unit that defined the removed symbol
// r in the old build, and r's explicit alignment when DWARF has one; ""
// without DWARF, an error when the unit's file is not in the source tree.
func (pl *placer) removedTU(r *Symbol) (tu string, align uint64, err error) {
	if pl.dwOld != nil {
		if d := pl.dwOld.lookup(r); d != nil {
			if tu = pl.rel(d.cu.name); tu == "" {
				return "", 0, fmt.Errorf("%s was defined in %s, which is not in %s (was the file removed?)", r.Name, d.cu.name, pl.srcDir)
			}
			return tu, d.align, nil
		}
	}
	return "", 0, nil
}

// order says how tu lays out the new build's section sec (its symbols
// for which same is true): +1 source order, -1 reverse source order; how
// says how that was found.
func (pl *placer) order(tu string, near site, sec *Section, same func(*Symbol) bool) (int, string) {
	if near.cu != nil && pl.dwNew != nil {
		return pl.dwNew.order(pl.new, near.cu, sec, same, pl.rel)
	}
	if near.obj != nil {
		if f, err := pl.cfile(tu); err == nil {
			inc, dec := near.obj.obj.order(near.obj.sec, f)
			switch {
			case inc > dec:
				return 1, fmt.Sprintf("source order (%d of %d neighbouring pairs in %s)", inc, inc+dec, filepath.Base(near.obj.obj.path))
			case dec > inc:
				return -1, fmt.Sprintf("reverse source order (%d of %d neighbouring pairs in %s)", dec, inc+dec, filepath.Base(near.obj.obj.path))
			}
		}
	}
	return producerOrder("", sec.Exec)
}

// spot is where the padding definition goes.
type spot struct {
	file   string // relative to the source folder
	index  int    // 0-based line the definition is inserted before
	anchor string // the symbol it is next to ("" at the end of the file)
	line   int    // the anchor's 1-based line
	after  bool
	depth  int    // bracket depth of the anchor (a function-local static: > 0)
	order  string // how the order was found
	inSec  string // the input section when known
}

// findSpot places the padding between p.left and p.right of the new
// build, in the translation unit of the root change: next to whichever of
// them that unit defines, on the side its layout order asks for.
func (pl *placer) findSpot(p *plan) (*spot, error) {
	tu := ""
	if !p.removed { // added or resized: the root is in the new build
		tu = pl.siteOf(p.root, "").tu
	} else {
		var a uint64
		var err error
		if tu, a, err = pl.removedTU(p.root); err != nil {
			return nil, err
		}
		if a > 0 && p.root.Addr%a == 0 && !p.alignGiven {
			p.align = a
		}
	}
	ls, rs := pl.siteOf(p.left, tu), pl.siteOf(p.right, tu)
	if tu == "" {
		// No DWARF for the removed symbol: its file from the symbol table
		// (local symbols), else the unit its neighbours share.
		switch {
		case p.root.File != "" && ls.tu != "" && filepath.Base(ls.tu) == p.root.File:
			tu = ls.tu
		case p.root.File != "" && rs.tu != "" && filepath.Base(rs.tu) == p.root.File:
			tu = rs.tu
		case ls.tu != "" && ls.tu == rs.tu:
			tu = ls.tu
		case ls.tu != "":
			tu = ls.tu
			pl.notes = append(pl.notes, fmt.Sprintf("the file that defined %s is not known (no DWARF in the old build): took %s, the file of %s before it", p.root.Name, tu, p.left.Name))
		case rs.tu != "":
			tu = rs.tu
			pl.notes = append(pl.notes, fmt.Sprintf("the file that defined %s is not known (no DWARF in the old build): took %s, the file of %s after it", p.root.Name, tu, p.right.Name))
		default:
			return nil, fmt.Errorf("cannot tell which source file defined %s: no DWARF in the builds (build with -g) and no object files beside the sources", p.root.Name)
		}
	}
	if tu == "" {
		return nil, fmt.Errorf("the file that defined %s is not in %s", p.root.Name, pl.srcDir)
	}
	f, err := pl.cfile(tu)
	if err != nil {
		return nil, err
	}
	sp := &spot{file: tu}
	anchorAt := func(s *Symbol, st site, after bool) {
		sp.anchor, sp.line, sp.after, sp.inSec = s.Name, st.line, after, st.inSec
		l := st.line - 1
		sp.depth = f.depth[l]
		if after {
			if end, _, ok := f.stmtEnd(l); ok {
				sp.index = f.afterExports(end, BaseName(s.Name))
			} else {
				sp.index = l + 1
			}
		} else {
			sp.index = f.stmtStart(l)
		}
		if !hasWord(f.lines[l], BaseName(s.Name)) {
			pl.notes = append(pl.notes, fmt.Sprintf("%s:%d does not name %s: is the source folder the new build's source?", tu, st.line, s.Name))
		}
	}
	// In .bss, gcc allocates a file's static zero-initialised variables as
	// local commons after its other ones: only neighbours of the root's
	// linkage tell where the padding (of the same linkage) lands.
	same := func(s *Symbol) bool { return !p.sec.NoBits || s.Local == p.root.Local }
	inL := p.left != nil && same(p.left) && ls.inTU(tu) && ls.line <= len(f.lines)
	inR := p.right != nil && same(p.right) && rs.inTU(tu) && rs.line <= len(f.lines)
	switch {
	case inL && inR:
		// Both neighbours are in the unit: the padding goes between
		// their definitions, whichever order the unit is laid out in.
		if ls.line <= rs.line {
			sp.order = "source order (the neighbours' lines)"
			anchorAt(p.left, ls, true)
		} else {
			sp.order = "reverse source order (the neighbours' lines)"
			anchorAt(p.right, rs, true)
		}
	case inR:
		dir, how := pl.order(tu, rs, p.sec, same)
		sp.order = how
		anchorAt(p.right, rs, dir < 0) // emitted just before right
	case inL:
		dir, how := pl.order(tu, ls, p.sec, same)
		sp.order = how
		anchorAt(p.left, ls, dir >= 0) // emitted just after left
	default:
		// The unit defines nothing else in this section: anywhere in it
		// will do.
		sp.index, sp.order = len(f.lines), "the file defines nothing else there"
		if ls.inSec != "" {
			sp.inSec = ls.inSec
		}
	}
	return sp, nil
}

// unoptimised reports whether the new build compiled tu without
// optimisation (-O0 or no -O flag in DW_AT_producer).
func (pl *placer) unoptimised(tu string) bool {
	if pl.dwNew == nil {
		return false
	}
	for _, cu := range pl.dwNew.cus {
		if cu.producer == "" || pl.rel(cu.name) != tu {
			continue
		}
		opt := false
		for _, a := range strings.Fields(cu.producer) {
			if strings.HasPrefix(a, "-O") {
				opt = a != "-O0"
			}
		}
		return !opt
	}
	return false
}
