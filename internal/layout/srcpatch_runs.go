// Source patches: whether every shift run the root change moved, in every
// section, is back in the patched build.

package layout

import (
	"fmt"
	"strings"
)

// movedRun is a shift run of the diff the patch was made from: what the
// check looks for in the patched build.
type movedRun struct {
	section, from string
	shift         int64
	names         []string // the run's symbols, as named in A
	root          string   // its root change
	ours          bool     // the root change the patch undoes
}

// RunBack says how much of one shift run of the old-to-new diff the
// patched build has back at the old addresses.
type RunBack struct {
	// Section, From (the run's first symbol), Shift (old to new) and
	// Count (its symbols) describe the run; Root is its root change.
	Section, From string
	Shift         int64
	Count         int
	Root          string
	// Ours is true when the run belongs to the root change the patch
	// undoes.
	Ours bool
	// Back counts the run's symbols at their old address in the patched
	// build.
	Back int
	// Why says, when Back < Count, where the others are and what the
	// patched build's own trace blames: the change the patch does not
	// undo.
	Why string
}

// movedRuns records every run of d that moved, with its root change, so
// that Check can look for each in the patched build.
func movedRuns(d *DiffResult, root PatchRoot) []movedRun {
	ours := -1
	for k := range d.RootChanges {
		for _, i := range d.RootChanges[k].Roots {
			for _, c := range d.Runs[i].Causes {
				if c.Symbol != nil && c.Kind == root.Kind && c.Symbol.Name == root.Symbol {
					ours = k
				}
			}
		}
	}
	var out []movedRun
	for i := range d.Runs {
		r := &d.Runs[i]
		if r.Shift == 0 {
			continue
		}
		m := movedRun{section: r.Section, from: r.First.Name(), shift: r.Shift, ours: r.RootChange == ours && ours >= 0}
		if r.RootChange >= 0 {
			m.root = d.RootChanges[r.RootChange].String()
		}
		for k := r.lo; k < r.lo+int32(r.Count); k++ {
			m.names = append(m.names, d.Changes[k].A.Name)
		}
		out = append(out, m)
	}
	return out
}

// checkRuns counts, for each recorded run, its symbols back at their old
// address in d (the old build against the patched one), and says where
// the others went and why.
func checkRuns(runs []movedRun, d *DiffResult) []RunBack {
	byName := make(map[string]*Change, len(d.Changes))
	for i := range d.Changes {
		byName[d.Changes[i].A.Name] = &d.Changes[i]
	}
	out := make([]RunBack, 0, len(runs))
	for _, m := range runs {
		rb := RunBack{Section: m.section, From: m.from, Shift: m.shift, Count: len(m.names), Root: m.root, Ours: m.ours}
		var first *Change
		missing := 0
		for _, n := range m.names {
			c := byName[n]
			switch {
			case c == nil:
				missing++
			case c.A.Addr == c.B.Addr:
				rb.Back++
			case first == nil:
				first = c
			}
		}
		if rb.Back < rb.Count {
			rb.Why = stillMoved(d, first, missing)
		}
		out = append(out, rb)
	}
	return out
}

// stillMoved describes symbols of a run not back: the first one's shift
// in the patched build and that build's root change for it.
func stillMoved(d *DiffResult, c *Change, missing int) string {
	var parts []string
	if c != nil {
		s := fmt.Sprintf("%s is %+d bytes from its old address", c.A.Name, c.Shift())
		if rc := d.RootOf(c); rc != nil {
			s += "; the patched build's trace: " + rc.String()
			if !rc.Traced {
				for _, i := range rc.Roots {
					if b := d.Runs[i].Break; b != "" {
						s += " (untraced: " + b + ")"
						break
					}
				}
			}
		}
		parts = append(parts, s)
	}
	if missing > 0 {
		parts = append(parts, fmt.Sprintf("%d not in the patched build", missing))
	}
	return strings.Join(parts, "; ")
}
