// Tracing shift runs to their root change.
//
// A shift run starts where the shift changes. When nothing was added,
// removed or resized there, what changed is the padding before the run's
// first symbol: the shift that reached it (that of the run just before in
// B's address order, in its own section or an earlier one) re-rounded to
// the symbol's alignment. A 16-byte removal that meets a 32-byte-aligned
// object becomes -32 (the padding doubles it) or 0 (the padding absorbs
// it). The trace links such a run to the run it carried from, and that
// one to its own source, back to a run with a real cause: the root.

package layout

import (
	"cmp"
	"slices"
)

// maxAlign is the largest alignment the trace assumes: an address that is
// a multiple of more is taken as page-aligned.
const maxAlign = 4096

// maxLabels bounds the labels between two runs looked at as alignment
// points, and maxCands the shifts followed through them.
const (
	maxLabels = 16
	maxCands  = 8
)

// alignOf returns the largest power of two (at most maxAlign) that
// divides every address: an upper bound of the alignment of a symbol
// found there in both builds.
func alignOf(addrs ...uint64) uint64 {
	var x uint64
	for _, a := range addrs {
		x |= a
	}
	if x == 0 {
		return maxAlign
	}
	return min(x&-x, maxAlign)
}

// rounds reports whether shift s is shift in re-rounded to a boundary of
// align bytes: a multiple of align less than align away from in.
func rounds(s, in int64, align uint64) bool {
	a := int64(align)
	d := s - in
	if d < 0 {
		d = -d
	}
	return s%a == 0 && d < a
}

// boundary returns the smallest alignment that re-rounds shift in to s:
// the power of two above their distance.
func boundary(s, in int64) uint64 {
	d := s - in
	if d < 0 {
		d = -d
	}
	a := uint64(1)
	for a <= uint64(d) {
		a <<= 1
	}
	return a
}

// roundings returns the shifts that shift in can become at a boundary of
// align bytes: the multiples of align just below and above it.
func roundings(in int64, align uint64) []int64 {
	a := int64(align)
	lo := in / a * a
	if lo > in {
		lo -= a
	}
	if lo == in {
		return []int64{in}
	}
	return []int64{lo, lo + a}
}

// addrSpace separates the symbols whose addresses are not comparable
// with the others': TLS data (offsets in the thread block) and kernel
// per-CPU variables (offsets in the per-CPU area).
func addrSpace(s *Section) int {
	switch {
	case s.TLS:
		return 1
	case s.Name == ".data..percpu":
		return 2
	}
	return 0
}

// traceRuns sets From, Root, Via, Carried, Align and Tables of every run.
func (d *DiffResult) traceRuns(matchB []int32) {
	if len(d.Runs) == 0 {
		return
	}
	// The changes in B's address order, each space apart.
	order := make([]int32, len(d.Changes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(i, j int32) int {
		x, y := d.Changes[i].B, d.Changes[j].B
		if c := cmp.Compare(addrSpace(x.Section), addrSpace(y.Section)); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Addr, y.Addr); c != 0 {
			return c
		}
		return cmp.Compare(x.Size, y.Size)
	})
	pos := make([]int32, len(d.Changes))
	for p, i := range order {
		pos[i] = int32(p)
	}
	runs := make([]int, len(d.Runs))
	for i := range runs {
		runs[i] = i
	}
	slices.SortFunc(runs, func(i, j int) int { return cmp.Compare(pos[d.Runs[i].lo], pos[d.Runs[j].lo]) })

	t := &tracer{d: d, matchB: matchB, pending: map[int][]Cause{}}
	t.sections()
	for _, i := range runs {
		r := &d.Runs[i]
		var pred *Change
		if p := pos[r.lo]; p > 0 {
			c := &d.Changes[order[p-1]]
			if addrSpace(c.B.Section) == addrSpace(r.First.B.Section) {
				pred = c
				r.From = c.Run
			}
		}
		t.trace(i, pred)
	}
}

// tracer holds what tracing the runs needs besides the runs.
type tracer struct {
	d         *DiffResult
	matchB    []int32
	elf       bool
	secs      []*SectionChange          // ELF: by B address
	byName    map[string]*SectionChange // ELF: by name
	bare      map[*Section]bool         // ELF: B's sections holding no matched symbol
	pending   map[int][]Cause           // run -> export names not yet met
	labelsA   map[string]*Label         // A's labels by name
	exports   exportStrings
	kallsymsD kallsymsDiff
}

func (t *tracer) sections() {
	d := t.d
	t.elf = d.A.Format == ELF && d.B.Format == ELF
	if !t.elf {
		return
	}
	t.byName = map[string]*SectionChange{}
	t.bare = map[*Section]bool{}
	for i := range d.Sections {
		sc := &d.Sections[i]
		t.secs = append(t.secs, sc)
		t.byName[sc.Name] = sc
		t.bare[sc.B] = true
	}
	for i := range d.Changes {
		delete(t.bare, d.Changes[i].B.Section)
	}
	slices.SortStableFunc(t.secs, func(x, y *SectionChange) int { return cmp.Compare(x.B.Addr, y.B.Addr) })
}

// trace decides where run i's shift comes from; pred is the change just
// before its first symbol in B's address order (nil at the start).
func (t *tracer) trace(i int, pred *Change) {
	d := t.d
	r := &d.Runs[i]
	var in int64
	if pred != nil {
		in = pred.Shift()
	}
	own, guessed := ownCauses(r)
	if own {
		if r.Shift != 0 {
			r.Root = i
			if names := t.exportNames(r.Causes); len(names) > 0 {
				t.pending[i] = names
			}
		}
		return
	}
	wps := t.waypoints(pred, r.First)
	prev := ""
	if pred != nil {
		prev = pred.Name()
	}
	w := walk(in, prev, wps)
	// An export entry's name lies in the string table after the entries:
	// when the shift re-rounds with it, that is the explanation.
	var names []Cause
	if pending := t.pending[r.From]; pred != nil && len(pending) > 0 {
		if w2 := walk(in+causeBytes(pending), prev, wps); w2.ok && len(w2.regions) <= len(w.regions) {
			w, names = w2, pending
		}
	}
	ok, at := w.ok, w.at
	var tables []Cause
	for _, p := range wps {
		if p.table != nil && p.table.SizeChange != 0 {
			tables = append(tables, Cause{Kind: Table, Table: p.table.Name, Bytes: p.table.SizeChange, Count: 1})
		}
	}
	tables = append(tables, w.regions...)
	t.exportTables(tables)
	t.kallsymsTables(tables)
	switch {
	case in == 0 && r.Shift == 0 && len(tables) == 0:
		// Nothing moved and nothing arrived.
	case !ok || len(tables) > 0 || pred == nil || d.Runs[pred.Run].Root < 0:
		// Nothing before explains the shift, or a table changed size (a
		// cause of its own, which ends the chain): the run is a root.
		r.Tables = tables
		if r.Shift != 0 {
			r.Root = i
			if len(tables) == 0 {
				r.Break = t.breakWhy(r, pred, in, w)
			}
		}
		if pred != nil && pred.B.Section == r.First.B.Section {
			r.Causes = lessPadding(r.Causes, causeBytes(w.regions))
		}
	default:
		from := &d.Runs[pred.Run]
		r.Carried, r.Align, r.Root, r.Tables = true, at, from.Root, names
		if pred.Run != from.Root {
			r.Via = append(slices.Clip(from.Via), pred.Run)
		}
		if p := t.pending[pred.Run]; names == nil && len(p) > 0 {
			t.pending[i] = p
		}
		if guessed {
			realignGuessed(r)
		}
	}
}

// ownCauses reports whether the run's causes are its own (symbols added,
// removed, reordered or, with a real size, resized), and whether it has a
// Resized cause of a symbol whose size a symbol map only guessed: that
// "resize" may be the padding after it.
func ownCauses(r *Run) (own, guessed bool) {
	for _, c := range r.Causes {
		switch c.Kind {
		case Added, Removed, Reordered, Table:
			own = true
		case Resized:
			if c.Symbol != nil && c.Symbol.SizeGuessed {
				guessed = true
			} else {
				own = true
			}
		}
	}
	return own, guessed
}

// realignGuessed turns a carried run's guessed-size Resized causes into
// padding: the gap after the symbol changed, not the symbol.
func realignGuessed(r *Run) {
	var bytes int64
	out := r.Causes[:0]
	for _, c := range r.Causes {
		if c.Kind == Resized || c.Kind == Realigned {
			bytes += c.Bytes
			continue
		}
		out = append(out, c)
	}
	if bytes != 0 {
		out = append(out, Cause{Kind: Realigned, Bytes: bytes, Count: 1})
	}
	r.Causes = out
}

// lessPadding takes the bytes of tables found between labels out of a
// run's "alignment padding changed" cause: what is left is the
// re-rounding (none: the cause goes).
func lessPadding(cs []Cause, tables int64) []Cause {
	if tables == 0 {
		return cs
	}
	for k, c := range cs {
		if c.Kind != Realigned {
			continue
		}
		if c.Bytes == tables {
			return append(cs[:k:k], cs[k+1:]...)
		}
		out := slices.Clone(cs)
		out[k].Bytes -= tables
		return out
	}
	return cs
}

func causeBytes(cs []Cause) int64 {
	var n int64
	for _, c := range cs {
		n += c.Bytes
	}
	return n
}
