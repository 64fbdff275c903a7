// Source patches: the seed report's proof, automated. Instead of padding a
// whole section from its start (pad.go), a definition of the right size
// and alignment is put back at the root change's own spot in its source
// file, so that every address after it comes back, not only the top
// suspect's.

package layout

import (
	"errors"
	"fmt"
	"strings"
)

// PatchRoot is the change a source patch undoes: a symbol removed from,
// added to or resized in a section, that shifted what follows it.
type PatchRoot struct {
	// Kind is Removed, Added or Resized.
	Kind CauseKind
	// Symbol is the symbol's name: in the old build when removed, in the
	// new one when added or resized.
	Symbol string
	// Section is its section, e.g. ".bss" ("" to take the first symbol of
	// that name).
	Section string
	// Align is the removed symbol's alignment; 0 infers it (DWARF's
	// DW_AT_alignment, else the symbol's address and neighbour in the old
	// build and its size).
	Align uint64
	// Delta is the shift of the symbols after an added or resized symbol
	// (new address minus old); 0 takes it from the layout diff.
	Delta int64
}

// String describes the change, e.g. "removed mds_user_clear (.bss)".
func (r PatchRoot) String() string {
	return fmt.Sprintf("%s %s (%s)", r.Kind, r.Symbol, r.Section)
}

// PatchRootFor finds the root change behind a suspect: the symbol added,
// removed or resized at the start of the suspect's shift run or, when that
// run only realigned, of the nearest run before it in the same section
// whose shift it carries on. An empty symbol takes the top-ranked change
// whose offset mod 64 changed. It returns the change and the suspect.
func PatchRootFor(d *DiffResult, symbol string) (PatchRoot, *Change, error) {
	var c *Change
	for _, x := range d.Ranked {
		if (symbol == "" && x.Off64Changed() && !metaSection(x.B.Section.Name)) || (symbol != "" && (x.A.Name == symbol || x.B.Name == symbol)) {
			c = x
			break
		}
	}
	if c == nil && symbol != "" {
		for i := range d.Changes {
			if x := &d.Changes[i]; x.A.Name == symbol || x.B.Name == symbol {
				c = x
				break
			}
		}
	}
	switch {
	case c == nil && symbol == "":
		return PatchRoot{}, nil, errors.New("no symbol changed its offset inside its 64-byte line: nothing to restore")
	case c == nil:
		return PatchRoot{}, nil, fmt.Errorf("no symbol %s in both builds", symbol)
	case c.Run < 0 || c.Shift() == 0:
		return PatchRoot{}, c, fmt.Errorf("%s did not move: nothing to restore", c.Name())
	}
	for i := c.Run; i >= 0 && d.Runs[i].Section == d.Runs[c.Run].Section && d.Runs[i].Shift != 0; i-- {
		var best *Cause
		for k := range d.Runs[i].Causes {
			x := &d.Runs[i].Causes[k]
			if x.Symbol == nil || (x.Kind != Removed && x.Kind != Added && x.Kind != Resized) {
				continue
			}
			if best == nil || abs64(x.Bytes) > abs64(best.Bytes) {
				best = x
			}
		}
		if best != nil {
			return PatchRoot{Kind: best.Kind, Symbol: best.Symbol.Name, Section: best.Symbol.Section.Name}, c, nil
		}
	}
	// No symbol before it in its section: the trace may know its root in
	// another one (a kernel's symbol table shrinking with a removed key).
	if rc := d.RootOf(c); rc != nil {
		for _, x := range rc.Causes {
			if x.Symbol != nil && (x.Kind == Removed || x.Kind == Added || x.Kind == Resized) && exportedName(x.Symbol.Name) == "" {
				return PatchRoot{Kind: x.Kind, Symbol: x.Symbol.Name, Section: x.Symbol.Section.Name}, c, nil
			}
		}
	}
	return PatchRoot{}, c, fmt.Errorf("no symbol added, removed or resized before %s in %s, and its root change (%v) names none: its shift comes from an earlier section or a reordering", c.Name(), c.B.Section.Name, d.RootOf(c))
}

// PatchRootNamed makes the root change for symbol name from the diff: a
// symbol only in the old build was removed, one only in the new build
// added, one in both whose size changed resized.
func PatchRootNamed(d *DiffResult, name string) (PatchRoot, error) {
	for _, s := range d.Removed {
		if s.Name == name {
			return PatchRoot{Kind: Removed, Symbol: name, Section: s.Section.Name}, nil
		}
	}
	for _, s := range d.Added {
		if s.Name == name {
			return PatchRoot{Kind: Added, Symbol: name, Section: s.Section.Name}, nil
		}
	}
	for i := range d.Changes {
		if c := &d.Changes[i]; c.B.Name == name || c.A.Name == name {
			if c.A.Size == c.B.Size {
				return PatchRoot{}, fmt.Errorf("%s is in both builds with the same size: not a root change", name)
			}
			return PatchRoot{Kind: Resized, Symbol: c.B.Name, Section: c.B.Section.Name}, nil
		}
	}
	return PatchRoot{}, fmt.Errorf("no symbol %s in either build", name)
}

// metaSection reports whether a section holds unwinding or start-up
// tables, not the program's code or data: not a suspect by itself.
func metaSection(name string) bool {
	for _, m := range []string{".eh_frame", ".gcc_except_table", ".init_array", ".fini_array", ".got", ".dynamic", ".note"} {
		if name == m || strings.HasPrefix(name, m+".") || strings.HasPrefix(name, m+"_") {
			return true
		}
	}
	return false
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// plan is where, in the new build's layout, the padding goes and what it
// must restore.
type plan struct {
	sec         *Section // the new build's section
	left, right *Symbol  // the new build's symbols the padding goes between (nil: none)
	root        *Symbol  // the removed (old build) or added/resized (new build) symbol
	removed     bool
	alignGiven  bool // the caller gave the alignment
	bytes       uint64
	align       uint64 // 0: none written
	exact       bool
	shift       int64  // the shift of right, new minus old
	spot        uint64 // old address from which every symbol must come back
	pad         uint64 // old address the padding must take (exact removals)
	notes       []string
}

// planPatch works out the padding's size, alignment and neighbours from
// the layout diff d.
func planPatch(d *DiffResult, root PatchRoot) (*plan, error) {
	byA := make(map[*Symbol]*Change, len(d.Changes))
	byB := make(map[*Symbol]*Change, len(d.Changes))
	for i := range d.Changes {
		c := &d.Changes[i]
		byA[c.A], byB[c.B] = c, c
	}
	pick := func(b *Binary, inDiff []*Symbol) (*Symbol, int) {
		var first *Symbol
		for _, s := range b.Lookup(root.Symbol) {
			if root.Section != "" && s.Section.Name != root.Section {
				continue
			}
			if first == nil {
				first = s
			}
			for _, x := range inDiff {
				if x == s {
					first = s
				}
			}
		}
		if first == nil {
			return nil, -1
		}
		for i := range b.Symbols {
			if &b.Symbols[i] == first {
				return first, i
			}
		}
		return nil, -1
	}
	// neighbour returns the nearest symbol of b's section sec from i in
	// direction dir that has a partner in the other build.
	neighbour := func(b *Binary, i, dir int, by map[*Symbol]*Change) *Change {
		sec := b.Symbols[i].Section
		for j, n := i+dir, 0; j >= 0 && j < len(b.Symbols) && b.Symbols[j].Section == sec && n < 4096; j, n = j+dir, n+1 {
			if c := by[&b.Symbols[j]]; c != nil {
				return c
			}
		}
		return nil
	}
	p := &plan{}
	switch root.Kind {
	case Removed:
		r, i := pick(d.A, d.Removed)
		if r == nil {
			return nil, fmt.Errorf("no symbol %s in the old build", root.Symbol)
		}
		if byA[r] != nil {
			return nil, fmt.Errorf("%s is in both builds: it was not removed", root.Symbol)
		}
		prev, next := neighbour(d.A, i, -1, byA), neighbour(d.A, i, +1, byA)
		if prev == nil && next == nil {
			return nil, fmt.Errorf("no symbol of %s is in both builds: nothing to place the padding next to", r.Section.Name)
		}
		p.root, p.removed, p.bytes, p.exact, p.spot, p.pad = r, true, r.Size, true, r.Addr, r.Addr
		if p.bytes == 0 {
			return nil, fmt.Errorf("%s has size 0: nothing to put back", r.Name)
		}
		if prev != nil {
			p.left, p.sec = prev.B, prev.B.Section
			if prev.Shift() != 0 || (prev.A.Size != prev.B.Size && !prev.A.SizeGuessed) {
				p.notes = append(p.notes, fmt.Sprintf("%s, just before the spot, moved or changed size too: the addresses can come back only as far as that change allows", prev.B.Name))
			}
		}
		if next != nil {
			p.right, p.sec, p.shift = next.B, next.B.Section, next.Shift()
			if p.shift == 0 {
				p.notes = append(p.notes, fmt.Sprintf("%s, just after %s, did not move: the removal was absorbed by alignment", next.B.Name, r.Name))
			}
		}
		p.align, p.alignGiven = root.Align, root.Align != 0
		if p.align == 0 {
			p.align = inferAlign(r, prev)
		}
	case Added, Resized:
		x, i := pick(d.B, d.Added)
		if x == nil {
			return nil, fmt.Errorf("no symbol %s in the new build", root.Symbol)
		}
		if root.Kind == Resized && byB[x] == nil {
			return nil, fmt.Errorf("%s is only in the new build: it was added, not resized", root.Symbol)
		}
		next := neighbour(d.B, i, +1, byB)
		p.root, p.left, p.sec, p.shift = x, x, x.Section, root.Delta
		if next != nil {
			p.right, p.spot = next.B, next.A.Addr
			if p.shift == 0 {
				p.shift = next.Shift()
			}
		}
		switch {
		case next == nil:
			return nil, fmt.Errorf("nothing after %s in %s is in both builds: nothing to restore", x.Name, x.Section.Name)
		case p.shift == 0:
			return nil, fmt.Errorf("%s, after %s, did not move: nothing to restore", next.B.Name, x.Name)
		case p.shift < 0:
			p.bytes, p.exact = uint64(-p.shift), true
		default:
			p.bytes = (LineSize - uint64(p.shift)%LineSize) % LineSize
			if p.bytes == 0 {
				return nil, fmt.Errorf("what follows %s moved by %d bytes, a multiple of 64: the offsets in cache lines are already the old ones", x.Name, p.shift)
			}
			p.notes = append(p.notes, fmt.Sprintf("a definition cannot take bytes away: %d bytes more make the shift %+d, so what follows gets back its offsets mod 64, not its addresses", p.bytes, p.shift+int64(p.bytes)))
		}
		p.align = 1
	default:
		return nil, fmt.Errorf("root change %s: want removed, added or resized", root.Kind)
	}
	if p.sec.Exec && p.align < 16 {
		p.align = 0 // the function gets the build's -falign-functions
	}
	return p, nil
}

// inferAlign guesses a removed symbol's alignment from the old build:
// at least what its gap after the symbol before needs, at most what its
// address allows, and otherwise what gcc gives an object of its size on
// x86-64 (16 for functions).
func inferAlign(r *Symbol, prev *Change) uint64 {
	tz := uint64(1)
	for tz < 4096 && r.Addr%(tz*2) == 0 {
		tz *= 2
	}
	a := uint64(1)
	if prev != nil && prev.A.Section == r.Section && prev.A.End() <= r.Addr {
		for a < tz && (prev.A.End()+a-1)/a*a != r.Addr {
			a *= 2
		}
	}
	nat := uint64(16)
	if r.Kind == Object {
		switch {
		case r.Size >= 32:
			nat = 32
		case r.Size >= 16:
			nat = 16
		default:
			nat = 1
			for nat*2 <= r.Size && nat < 8 {
				nat *= 2
			}
		}
	}
	return max(a, min(nat, tz))
}
