// Shift runs: the changes of a section grouped by shift, and what started
// each run.

package layout

// Run is a maximal sequence of consecutive symbols of one section of B
// that all moved by the same amount.
type Run struct {
	Section string
	Shift   int64
	// Jump is Shift minus the shift of the run before (or, for a
	// section's first run, minus 0).
	Jump        int64
	First, Last *Change
	Count       int
	// Prev is the symbol of B just before First (matched or added), nil
	// when First starts the section: the place where padding would go.
	Prev *Symbol
	// Causes explain Jump: what was added, removed or resized between the
	// previous run and this one, or the section moving or padding.
	Causes []Cause

	// The trace (trace.go): where the shift at the run's start came from.

	// From is the index in DiffResult.Runs of the run holding the symbol
	// just before First in B's address order, in any section: the run
	// whose shift reached this one's start. -1 when none.
	From int
	// Root is the index in DiffResult.Runs of the run whose own causes
	// started this run's shift: the run itself when its causes are real
	// (symbols added, removed, resized or reordered, a table resized) or
	// when nothing before explains its shift; Runs[From].Root when the
	// run only re-rounds the shift that reached it (Carried). -1 for a run
	// that did not move and absorbed nothing.
	Root int
	// Via lists the carried runs between Root and this one, in address
	// order (Root and this run left out).
	Via []int
	// Carried is true when the run's shift is the shift that reached it
	// (From's, plus any Tables) re-rounded to an alignment boundary: its
	// causes are padding only, and Root is an earlier run. A carried run
	// with Shift 0 is where the padding absorbed the shift.
	Carried bool
	lo      int32 // index of First in DiffResult.Changes
	// Align is the boundary, in bytes, at which the shift was re-rounded
	// on its way from From (at the first symbol, or at a label or section
	// start before it): the smallest power of two that explains the
	// rounding, since the addresses only bound the real alignment from
	// above. 0 when the shift arrived unchanged or the run is not Carried.
	Align uint64
	// Tables are tables without symbols of their own, between From and
	// this run, that changed size (Kind Table). For a root run, the ELF
	// sections (such as __ksymtab_gpl and __ksymtab_strings) whose change
	// is its cause; for a carried run, the exported names in
	// __ksymtab_strings (Estimated) that its root's export entries imply
	// and that a symbol map does not list.
	Tables []Cause
	// Break says, for a root run whose causes are padding only and that
	// no earlier change explains, what the trace tried and why the chain
	// breaks there: the shift that reached it, the boundary its addresses
	// allow, the neighbours' sizes. "" otherwise.
	Break string
	// RootChange is the index in DiffResult.RootChanges of the root change
	// this run belongs to, -1 when none.
	RootChange int
}

// Bytes returns the number of bytes the run spans in B.
func (r *Run) Bytes() uint64 { return r.Last.B.End() - r.First.B.Addr }

// maxListed bounds how many added or removed symbols a run's causes name
// one by one; the rest are summed into one cause. maxScan bounds how far
// the search for removed symbols walks, so that builds with shuffled
// layouts (lld --shuffle-sections, go -ldflags=-randlayout) stay linear.
const (
	maxListed = 16
	maxScan   = 4096
)

// runScan holds, for build A, prefix counts and byte sums of the symbols
// with no partner in B, to total a range's removed symbols in O(1).
type runScan struct {
	matchA, matchB []int32
	unCount        []int32 // unCount[i]: unmatched symbols in A.Symbols[:i]
	unBytes        []int64 // their sizes
	alCount        []int32 // alCount[i]: aliasOnly symbols in A.Symbols[:i]
}

// findRuns groups the changes of each section into shift runs and names
// the cause of each.
func (d *DiffResult) findRuns(matchA, matchB []int32) {
	sc := &runScan{matchA: matchA, matchB: matchB,
		unCount: make([]int32, len(matchA)+1), unBytes: make([]int64, len(matchA)+1),
		alCount: make([]int32, len(matchA)+1)}
	for i, m := range matchA {
		sc.unCount[i+1], sc.unBytes[i+1], sc.alCount[i+1] = sc.unCount[i], sc.unBytes[i], sc.alCount[i]
		switch m {
		case unmatched:
			sc.unCount[i+1]++
			sc.unBytes[i+1] += int64(d.A.Symbols[i].Size)
		case aliasOnly:
			sc.alCount[i+1]++
		}
	}
	// Count the runs first: a shuffled layout makes hundreds of thousands,
	// and growing the slice would copy them all several times.
	n := 0
	for i := range d.Changes {
		if c := &d.Changes[i]; i == 0 || c.B.Section != d.Changes[i-1].B.Section || c.Shift() != d.Changes[i-1].Shift() {
			n++
		}
	}
	d.Runs = make([]Run, 0, n)
	var cur *Run
	for i := range d.Changes {
		c := &d.Changes[i]
		sh := c.Shift()
		if cur != nil && cur.Last.B.Section == c.B.Section && cur.Shift == sh {
			cur.Last = c
			cur.Count++
			c.Run = len(d.Runs) - 1
			continue
		}
		var prev *Change
		if cur != nil && cur.Last.B.Section == c.B.Section {
			prev = cur.Last
		}
		d.Runs = append(d.Runs, Run{Section: c.B.Section.Name, Shift: sh, First: c, Last: c, Count: 1,
			From: -1, Root: -1, RootChange: -1, lo: int32(i)})
		cur = &d.Runs[len(d.Runs)-1]
		c.Run = len(d.Runs) - 1
		d.explain(cur, prev, sc)
	}
}

// explain fills in r.Prev, r.Jump and r.Causes from what lies between the
// previous run's last symbol (prev, nil at the section start) and the
// run's first symbol, in both builds.
func (d *DiffResult) explain(r *Run, prev *Change, sc *runScan) {
	a, b := d.A, d.B
	f := r.First
	if f.ib > 0 && b.Symbols[f.ib-1].Section == f.B.Section {
		r.Prev = &b.Symbols[f.ib-1]
	}
	var prevShift int64
	if prev != nil {
		prevShift = prev.Shift()
	}
	r.Jump = r.Shift - prevShift
	var sum int64

	// Section start moved (first run only).
	if prev == nil {
		if sa := a.section(f.B.Section.Name); sa != nil && sa.Addr != f.B.Section.Addr {
			mv := int64(f.B.Section.Addr - sa.Addr)
			r.Causes = append(r.Causes, Cause{Kind: SectionMoved, Bytes: mv, Count: 1})
			sum += mv
		}
	}
	// Added in B: the symbols between prev and f, all unmatched since prev
	// and f are consecutive matched symbols of B.
	lo := int32(-1)
	if prev != nil {
		lo = prev.ib
	} else {
		lo = f.ib - 1
		for lo >= 0 && b.Symbols[lo].Section == f.B.Section {
			lo--
		}
	}
	more := Cause{Kind: Added}
	for i := lo + 1; i < f.ib; i++ {
		if sc.matchB[i] != unmatched {
			continue
		}
		s := &b.Symbols[i]
		sum += int64(s.Size)
		if more.Count == 0 && len(r.Causes) < maxListed {
			r.Causes = append(r.Causes, Cause{Kind: Added, Symbol: s, Bytes: int64(s.Size), Count: 1})
		} else {
			more.Count++
			more.Bytes += int64(s.Size)
		}
	}
	if more.Count > 0 {
		r.Causes = append(r.Causes, more)
	}
	// Removed from A: unmatched symbols of A between prev and f in A.
	// Matched ones found there moved elsewhere in B: reordered.
	switch {
	case f.A.Section.Name != f.B.Section.Name:
		r.Causes = append(r.Causes, Cause{Kind: Reordered, Symbol: f.B, Count: 1})
	case prev != nil && (prev.A.Section != f.A.Section || prev.ia > f.ia):
		r.Causes = append(r.Causes, Cause{Kind: Reordered, Symbol: f.B, Count: 1})
	default:
		loA := int32(-1)
		if prev != nil {
			loA = prev.ia
		} else {
			loA = f.ia - 1
			for loA >= 0 && a.Symbols[loA].Section == f.A.Section {
				loA--
			}
		}
		from, to := loA+1, f.ia
		nUn := sc.unCount[to] - sc.unCount[from]
		bytesUn := sc.unBytes[to] - sc.unBytes[from]
		sum -= bytesUn
		var listed int32
		var listedBytes int64
		var moved *Symbol
		for i := from; i < to && i-from < maxScan && listed < nUn; i++ {
			s := &a.Symbols[i]
			switch {
			case sc.matchA[i] == aliasOnly:
				// an empty label B has under another name
			case sc.matchA[i] >= 0:
				if moved == nil {
					moved = &b.Symbols[sc.matchA[i]]
				}
			case listed < maxListed:
				r.Causes = append(r.Causes, Cause{Kind: Removed, Symbol: s, Bytes: -int64(s.Size), Count: 1})
				listed++
				listedBytes += int64(s.Size)
			default:
				i = to // enough listed; the rest is summed below
			}
		}
		if rest := nUn - listed; rest > 0 {
			r.Causes = append(r.Causes, Cause{Kind: Removed, Bytes: -(bytesUn - listedBytes), Count: int(rest)})
		}
		if nMatched := (to - from) - nUn - (sc.alCount[to] - sc.alCount[from]); nMatched > 0 {
			r.Causes = append(r.Causes, Cause{Kind: Reordered, Symbol: moved, Count: int(nMatched)})
		}
	}
	// The symbol just before changed size.
	if prev != nil && prev.A.Size != prev.B.Size {
		delta := int64(prev.B.Size - prev.A.Size)
		r.Causes = append(r.Causes, Cause{Kind: Resized, Symbol: prev.B, Bytes: delta, Count: 1})
		sum += delta
	}
	if rest := r.Jump - sum; rest != 0 && !hasReorder(r.Causes) {
		r.Causes = append(r.Causes, Cause{Kind: Realigned, Bytes: rest, Count: 1})
	}
}

func hasReorder(cs []Cause) bool {
	for _, c := range cs {
		if c.Kind == Reordered {
			return true
		}
	}
	return false
}
