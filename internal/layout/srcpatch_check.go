// Source patches: checking, on the build of the patched source, that the
// addresses came back.

package layout

import (
	"fmt"
	"strings"
)

// SymbolMove is a symbol not where the base build has it.
type SymbolMove struct {
	Name          string
	Base, Patched uint64
}

// CheckResult says whether a patched build has the base build's layout
// back from the patch's spot on.
type CheckResult struct {
	// Section is the patched section; Exact is true when the addresses
	// must come back, false when only the offsets mod 64 can.
	Section string
	Exact   bool
	// After counts the base build's symbols of Section from the spot on
	// that the patched build has too; Back those at their base address
	// (Exact) or base offset mod 64; NotBack lists the first others.
	After, Back int
	NotBack     []SymbolMove
	// Missing counts the base build's symbols from the spot on that the
	// patched build lacks (other than the removed root symbol).
	Missing int
	// Before counts the symbols of Section before the spot, BeforeMoved
	// those that moved: the patch should move none of them.
	Before, BeforeMoved int
	// Pad is the padding symbol in the patched build ("" when its symbol
	// table lacks it); PadAt is its address and PadBack whether that is
	// the removed symbol's base address (exact removals only).
	Pad     string
	PadAt   uint64
	PadBack bool
	// Suspect is the symbol the patch was made for, SuspectBack whether
	// it is back (false when not found).
	Suspect     string
	SuspectBack bool
	// OtherMoved counts the symbols of other sections not at their base
	// address (or offset): changes the patch does not undo, such as a
	// kernel export table entry that went with the removed symbol.
	OtherMoved    int
	OtherSections []string
	// Restored is true when every symbol from the spot on is back, none
	// before it moved, and the suspect (if any) is back.
	Restored bool
	// Runs follow every shift run of the old-to-new diff, in every
	// section: how many of its symbols are back at their old address,
	// and, for those that are not, why. AllBack is true when every run
	// of the patch's root change is back.
	Runs    []RunBack
	AllBack bool
}

// maxNotBack bounds CheckResult.NotBack.
const maxNotBack = 8

// Check compares the build of the patched source with the base (old)
// build: whether every symbol of the patched section from the spot on is
// back at its base address (or, for a growth, offset mod 64), and
// sp.Suspect with them.
func (sp *SrcPatch) Check(patched, base *Binary) CheckResult {
	suspect := sp.Suspect
	r := CheckResult{Section: sp.Section, Exact: sp.Exact, Suspect: suspect}
	d := Diff(base, patched, DiffOptions{NoSource: true, Top: 1})
	back := func(c *Change) bool {
		if sp.Exact {
			return c.A.Addr == c.B.Addr
		}
		return c.A.Off(LineSize) == c.B.Off(LineSize)
	}
	others := map[string]bool{}
	for i := range d.Changes {
		c := &d.Changes[i]
		ok := back(c)
		if suspect != "" && (c.A.Name == suspect || c.B.Name == suspect) {
			r.SuspectBack = ok
		}
		if c.A.Section.Name != sp.Section {
			if !ok {
				r.OtherMoved++
				if !others[c.A.Section.Name] {
					others[c.A.Section.Name] = true
					r.OtherSections = append(r.OtherSections, c.A.Section.Name)
				}
			}
			continue
		}
		if c.A.Addr < sp.spot {
			r.Before++
			if c.A.Addr != c.B.Addr {
				r.BeforeMoved++
			}
			continue
		}
		r.After++
		if ok {
			r.Back++
		} else if len(r.NotBack) < maxNotBack {
			r.NotBack = append(r.NotBack, SymbolMove{Name: c.B.Name, Base: c.A.Addr, Patched: c.B.Addr})
		}
	}
	for _, s := range d.Removed {
		if s.Section.Name == sp.Section && s.Addr >= sp.spot && !(sp.Root.Kind == Removed && s.Name == sp.Root.Symbol) {
			r.Missing++
		}
	}
	if ps := patched.Lookup(sp.Name); len(ps) > 0 {
		r.Pad, r.PadAt = sp.Name, ps[0].Addr
		r.PadBack = sp.pad != 0 && ps[0].Addr == sp.pad
	}
	r.Runs = checkRuns(sp.runs, d)
	r.AllBack = true
	for _, rb := range r.Runs {
		if rb.Ours && rb.Back < rb.Count {
			r.AllBack = false
		}
	}
	r.Restored = r.After > 0 && r.Back == r.After && r.BeforeMoved == 0 &&
		(suspect == "" || r.SuspectBack) && (sp.pad == 0 || r.Pad == "" || r.PadBack)
	return r
}

// String sums the check up in one line.
func (r CheckResult) String() string {
	what := "address"
	if !r.Exact {
		what = "offset mod 64"
	}
	s := fmt.Sprintf("%s: %d of %d symbols from the spot on are back at their base %s", r.Section, r.Back, r.After, what)
	if r.BeforeMoved > 0 {
		s += fmt.Sprintf("; %d of %d before the spot moved", r.BeforeMoved, r.Before)
	}
	if r.Suspect != "" {
		if r.SuspectBack {
			s += fmt.Sprintf("; %s is back", r.Suspect)
		} else {
			s += fmt.Sprintf("; %s is not back", r.Suspect)
		}
	}
	if r.Restored {
		s = "restored: " + s
	} else {
		s = "not restored: " + s
	}
	return s + r.runsText()
}

// runsText sums up the runs of the old-to-new diff: how many are back in
// every section, and each that is not, with why.
func (r CheckResult) runsText() string {
	if len(r.Runs) == 0 {
		return ""
	}
	back, syms, all := 0, 0, 0
	var not []string
	for _, rb := range r.Runs {
		all += rb.Count
		syms += rb.Back
		if rb.Back == rb.Count {
			back++
			continue
		}
		whose := "another root change"
		if rb.Ours {
			whose = "this root change"
		}
		not = append(not, fmt.Sprintf("\n  still moved: %s %+d run from %s (%s): %d of %d back; %s", rb.Section, rb.Shift, rb.From, whose, rb.Back, rb.Count, rb.Why))
	}
	s := fmt.Sprintf("\nevery section: %d of %d shift runs of the change (%d of %d symbols) back at their old address", back, len(r.Runs), syms, all)
	return s + strings.Join(not, "")
}
