// Root changes: the shift runs grouped by the change that started them,
// ranked by what they moved.

package layout

import (
	"cmp"
	"slices"
	"strings"
)

// RootChange is one change that started shift runs: symbols added,
// removed or resized, a table resized, or padding that changed with no
// earlier shift to explain it, with every run it moved.
type RootChange struct {
	// Roots are the indices in DiffResult.Runs of the runs whose own
	// causes are this change: one, or several when one edit shows in
	// several places (a removed symbol and its export entry, its name in
	// the export string table; a section's symbols in a new order).
	Roots []int
	// Causes are the root runs' causes that name the change (symbols
	// added, removed, resized or reordered; then export entries; then
	// tables resized, including those met in the runs it was carried into,
	// such as an exported name in __ksymtab_strings); when there are none,
	// the root runs' causes as they are (a moved section start, changed
	// padding). It may share its array with the run's Causes: read only.
	Causes []Cause
	// Runs are the indices in DiffResult.Runs of every run it explains:
	// each root run followed by the runs its shift was carried into (and
	// those where padding absorbed it, with Shift 0), in address order.
	// The root runs come in the order of their best-ranked victim.
	Runs []int
	// Moved is the number of symbols in those runs that moved.
	Moved int
	// Bytes is the number of bytes those moved runs span in B.
	Bytes uint64
	// Hot is the summed profile hotness (self fraction) of the functions
	// it moved; 0 without a profile.
	Hot float64
	// Traced is true when a cause names what changed: a symbol added,
	// removed, resized or reordered, or a table resized. An untraced root
	// change is padding nothing before explains (its root runs' Break
	// says why); it never ranks above a traced one that moved more.
	Traced bool
	// Victims are the changes of those runs found in DiffResult.Ranked,
	// in its order: the first is the change's top suspect.
	Victims []*Change

	first int32 // position in Ranked of the best-ranked victim
}

// String describes the change: its causes, e.g. "removed mds_user_clear
// (16 bytes), removed __ksymtab_mds_user_clear (12 bytes)".
func (rc *RootChange) String() string {
	parts := make([]string, 0, len(rc.Causes))
	for _, c := range rc.Causes {
		parts = append(parts, c.String())
	}
	if len(parts) == 0 {
		return "no cause found"
	}
	return strings.Join(parts, ", ")
}

// groupRoots builds RootChanges from the runs' roots, once Ranked is
// final, and ranks them by what they explain (see rankRoots). A shuffled layout makes every run a root: the slices
// of all root changes share a few arrays, and nothing here is a map but
// the export keys.
func (d *DiffResult) groupRoots() {
	n := len(d.Runs)
	// Root runs that name the same exported symbol (NAME, __ksymtab_NAME,
	// its name in __ksymtab_strings, ...) are one change: rc[root run] is
	// the index of its root change.
	rc := make([]int32, n)
	var byKey map[rootKey]int32
	for i := range d.Runs {
		rc[i] = -1
		if d.Runs[i].Root != i {
			continue
		}
		rootKeys(&d.Runs[i], func(k rootKey) {
			if j, ok := byKey[k]; ok && rc[i] < 0 {
				rc[i] = j
			}
		})
		if rc[i] < 0 {
			rc[i] = int32(len(d.RootChanges))
			d.RootChanges = append(d.RootChanges, RootChange{})
		}
		rootKeys(&d.Runs[i], func(k rootKey) {
			if byKey == nil {
				byKey = map[rootKey]int32{}
			}
			if _, ok := byKey[k]; !ok {
				byKey[k] = rc[i]
			}
		})
	}
	// Each root run's best-ranked victim, in its own run or one it carried
	// into, and how many runs it carried into.
	best := make([]int32, n)
	carried := make([]int32, n+1)
	for i := range d.Runs {
		best[i] = int32(len(d.Ranked))
		if r := &d.Runs[i]; r.Root >= 0 && r.Root != i {
			carried[r.Root+1]++
		}
	}
	for i, c := range d.Ranked {
		if c.Run >= 0 {
			if root := d.Runs[c.Run].Root; root >= 0 && best[root] == int32(len(d.Ranked)) {
				best[root] = int32(i)
			}
		}
	}
	// The carried runs by root (a counting sort), each root's in address
	// order.
	for i := 1; i <= n; i++ {
		carried[i] += carried[i-1]
	}
	byRoot := make([]int, carried[n])
	next := slices.Clone(carried[:n])
	for i := range d.Runs {
		if r := &d.Runs[i]; r.Root >= 0 && r.Root != i {
			byRoot[next[r.Root]] = i
			next[r.Root]++
		}
	}
	byAddr := func(i, j int) int { return cmp.Compare(d.Runs[i].First.B.Addr, d.Runs[j].First.B.Addr) }
	// The root runs of each change, then all its runs, in shared arrays.
	nRoots := make([]int, len(d.RootChanges))
	nRuns := make([]int, len(d.RootChanges))
	for i := range d.Runs {
		if k := rc[i]; k >= 0 {
			nRoots[k]++
			nRuns[k] += 1 + int(carried[i+1]-carried[i])
		}
	}
	roots := make([]int, 0, n)
	runs := make([]int, 0, n)
	for k := range d.RootChanges {
		d.RootChanges[k].Roots = roots[len(roots) : len(roots) : len(roots)+nRoots[k]]
		roots = roots[:len(roots)+nRoots[k]]
		d.RootChanges[k].Runs = runs[len(runs) : len(runs) : len(runs)+nRuns[k]]
		runs = runs[:len(runs)+nRuns[k]]
	}
	for i := range d.Runs {
		if k := rc[i]; k >= 0 {
			d.RootChanges[k].Roots = append(d.RootChanges[k].Roots, i)
		}
	}
	for k := range d.RootChanges {
		x := &d.RootChanges[k]
		if len(x.Roots) > 1 {
			slices.SortStableFunc(x.Roots, func(i, j int) int {
				if c := cmp.Compare(best[i], best[j]); c != 0 {
					return c
				}
				return byAddr(i, j)
			})
		}
		x.first = int32(len(d.Ranked))
		for _, root := range x.Roots {
			rest := byRoot[carried[root]:carried[root+1]]
			slices.SortStableFunc(rest, byAddr)
			x.Runs = append(append(x.Runs, root), rest...)
			x.first = min(x.first, best[root])
		}
		for _, i := range x.Runs {
			if r := &d.Runs[i]; r.Shift != 0 {
				x.Moved += r.Count
				x.Bytes += r.Bytes()
			}
		}
		x.Causes = d.rootCauses(x)
		x.Traced = traced(x.Causes)
	}
	for i := range d.Changes {
		if c := &d.Changes[i]; c.Hot > 0 && c.Shift() != 0 && c.Run >= 0 {
			if root := d.Runs[c.Run].Root; root >= 0 && rc[root] >= 0 {
				d.RootChanges[rc[root]].Hot += c.Hot
			}
		}
	}
	// Rank them, and point the runs to their change.
	d.RootChanges = rankRoots(d.RootChanges)
	for k := range d.RootChanges {
		for _, i := range d.RootChanges[k].Runs {
			d.Runs[i].RootChange = k
		}
	}
	// The victims, in Ranked order, in one shared array.
	nVictims := make([]int, len(d.RootChanges))
	total := 0
	for _, c := range d.Ranked {
		if c.Run >= 0 && d.Runs[c.Run].RootChange >= 0 {
			nVictims[d.Runs[c.Run].RootChange]++
			total++
		}
	}
	victims := make([]*Change, 0, total)
	for k := range d.RootChanges {
		d.RootChanges[k].Victims = victims[len(victims) : len(victims) : len(victims)+nVictims[k]]
		victims = victims[:len(victims)+nVictims[k]]
	}
	for _, c := range d.Ranked {
		if c.Run >= 0 && d.Runs[c.Run].RootChange >= 0 {
			x := &d.RootChanges[d.Runs[c.Run].RootChange]
			x.Victims = append(x.Victims, c)
		}
	}
}

// rootKey is what makes root runs one change: an exported name their
// causes are about (a symbol, its export entries, its name in the export
// string table), or, for a run whose symbols only came out of order, its
// section: a new link order is one change, however many runs it makes.
type rootKey struct {
	kind CauseKind // Added, Removed or Reordered
	name string    // the exported name, or the section
}

// rootKeys calls f with each key of root run r.
func rootKeys(r *Run, f func(rootKey)) {
	n := 0
	add := func(kind CauseKind, name string) {
		if e := exportedName(name); e != "" {
			name = e
		}
		n++
		f(rootKey{kind, name})
	}
	reordered := false
	for _, c := range r.Causes {
		switch {
		case c.Kind == Reordered:
			reordered = true
		case c.Symbol != nil && (c.Kind == Added || c.Kind == Removed):
			add(c.Kind, c.Symbol.Name)
		}
	}
	for _, c := range r.Tables {
		if c.Symbol == nil {
			continue
		}
		kind := Removed
		if c.Bytes > 0 {
			kind = Added
		}
		add(kind, c.Symbol.Name)
	}
	if reordered && n == 0 {
		f(rootKey{Reordered, r.Section})
	}
}

// rootCauses returns the causes that name a root change: symbols first
// (reorderings summed into one), then export entries, then tables.
func (d *DiffResult) rootCauses(rc *RootChange) []Cause {
	if len(rc.Roots) == 1 && len(rc.Runs) == 1 {
		// One run: its causes as they are when they all name the change.
		r := &d.Runs[rc.Roots[0]]
		plain := len(r.Tables) == 0
		for _, c := range r.Causes {
			plain = plain && c.Kind != SectionMoved && c.Kind != Realigned && (c.Symbol == nil || exportedName(c.Symbol.Name) == "")
		}
		if plain {
			return r.Causes[:len(r.Causes):len(r.Causes)]
		}
	}
	var syms, exports, tables []Cause
	var order Cause // the reorderings, summed
	for _, i := range rc.Roots {
		r := &d.Runs[i]
		for _, c := range r.Causes {
			switch {
			case c.Kind == SectionMoved || c.Kind == Realigned:
			case c.Kind == Reordered:
				if order.Count == 0 {
					order = c
				} else {
					order.Count += c.Count
				}
			case c.Symbol != nil && exportedName(c.Symbol.Name) != "":
				exports = append(exports, c)
			default:
				syms = append(syms, c)
			}
		}
		tables = append(tables, r.Tables...)
	}
	if order.Count > 0 {
		syms = append(syms, order)
	}
	for _, i := range rc.Runs {
		if r := &d.Runs[i]; r.Root != i {
			tables = append(tables, r.Tables...)
		}
	}
	out := append(append(syms, exports...), tables...)
	if len(out) == 0 {
		for _, i := range rc.Roots {
			out = append(out, d.Runs[i].Causes...)
		}
	}
	return out
}

// RootOf returns the root change of c's shift run, or nil.
func (d *DiffResult) RootOf(c *Change) *RootChange {
	if c.Run < 0 || d.Runs[c.Run].RootChange < 0 {
		return nil
	}
	return &d.RootChanges[d.Runs[c.Run].RootChange]
}
