package layout

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// piece is one input of a synthetic link: a symbol, bytes with no symbol
// (a string table), or an alignment directive.
type piece struct {
	name  string // "" for bytes with no symbol or a directive
	typ   byte   // nm letter
	size  uint64
	align uint64
	data  []byte // the contents of bytes with no symbol, or nil (zeros)
}

func obj(typ byte, name string, size, align uint64) piece {
	return piece{name: name, typ: typ, size: size, align: align}
}

// unlabelled returns size bytes that no symbol names.
func unlabelled(size uint64) piece { return piece{size: size, align: 1} }

// contents returns the bytes b, which no symbol names.
func contents(b []byte) piece { return piece{size: uint64(len(b)), align: 1, data: b} }

// placed is a symbol where the synthetic linker put it.
type placed struct {
	addr, size uint64
	typ        byte
	name       string
}

// link lays the pieces out from base as a linker would: each at the next
// multiple of its alignment, in order.
func link(base uint64, ps ...piece) []placed {
	var out []placed
	at := base
	for _, p := range ps {
		if p.align > 1 {
			at = (at + p.align - 1) / p.align * p.align
		}
		if p.name != "" {
			out = append(out, placed{at, p.size, p.typ, p.name})
		}
		at += p.size
	}
	return out
}

// symbolMap renders placed symbols as a System.map (sorted by address, no
// sizes) or, with sizes, as `nm -n -S` prints them.
func symbolMap(sizes bool, parts ...[]placed) string {
	var all []placed
	for _, p := range parts {
		all = append(all, p...)
	}
	slices.SortStableFunc(all, func(x, y placed) int {
		switch {
		case x.addr < y.addr:
			return -1
		case x.addr > y.addr:
			return 1
		}
		return 0
	})
	var b strings.Builder
	for _, p := range all {
		if sizes {
			fmt.Fprintf(&b, "%016x %016x %c %s\n", p.addr, p.size, p.typ, p.name)
		} else {
			fmt.Fprintf(&b, "%016x %c %s\n", p.addr, p.typ, p.name)
		}
	}
	return b.String()
}

// addrOf returns the address of name among the placed symbols.
func addrOf(t testing.TB, name string, parts ...[]placed) uint64 {
	t.Helper()
	for _, p := range parts {
		for _, s := range p {
			if s.name == name {
				return s.addr
			}
		}
	}
	t.Fatalf("no symbol %s", name)
	return 0
}

// without returns ps less the pieces called one of names (their bytes
// go too).
func without(ps []piece, names ...string) []piece {
	var out []piece
	for _, p := range ps {
		if !slices.Contains(names, p.name) || p.name == "" {
			out = append(out, p)
		}
	}
	return out
}

// runOf returns the run holding symbol name.
func runOf(t testing.TB, d *DiffResult, name string) (*Run, int) {
	t.Helper()
	c := changeOf(t, d, name)
	if c.Run < 0 {
		t.Fatalf("%s is in no run", name)
	}
	return &d.Runs[c.Run], c.Run
}

// describeRuns prints the runs and their trace, for failure messages.
func describeRuns(d *DiffResult) string {
	var b strings.Builder
	for i := range d.Runs {
		r := &d.Runs[i]
		fmt.Fprintf(&b, "\n  run %d: %s %+d from %s (%d symbols): %v; from %d, root %d, via %v, carried %v at %d, tables %v, root change %d",
			i, r.Section, r.Shift, r.First.Name(), r.Count, r.Causes, r.From, r.Root, r.Via, r.Carried, r.Align, r.Tables, r.RootChange)
	}
	for k := range d.RootChanges {
		rc := &d.RootChanges[k]
		fmt.Fprintf(&b, "\n  root change %d: %s; runs %v, %d moved, %d victims", k+1, rc.String(), rc.Runs, rc.Moved, len(rc.Victims))
	}
	return b.String()
}
