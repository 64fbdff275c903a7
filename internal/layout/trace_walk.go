// The way from one shift run to the next: the places in between where the
// shift may have been re-rounded or where data without symbols of its own
// changed size.

package layout

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// waypoint is a place between two runs where the shift may change: a
// section start (known shift, ELF), a label found in both builds (known
// shift: the data before it has no sized symbol, so a change there is a
// table's), a label only B has (unknown shift), and finally the run's
// first symbol.
type waypoint struct {
	addr  uint64 // in B
	known bool
	shift int64 // the shift there, when known
	align uint64
	table *SectionChange // a section with no symbol of its own, or nil
	label string         // a label of both builds, or ""
	name  string         // what is there, for the break explanation
}

type cand struct {
	s  int64
	at uint64 // the last boundary that changed the shift
}

// walked is what following a shift through the waypoints found.
type walked struct {
	ok bool
	at uint64 // the boundary where the shift last changed
	// regions are the data between two labels (or after the run before
	// and up to a label) whose size changed: Table causes.
	regions []Cause
	// why says, when !ok, where and why re-rounding could not reach the
	// shift.
	why string
}

// walk follows shift in, that of the symbol before (prev, "" at the
// start), through the waypoints.
func walk(in int64, prev string, wps []waypoint) walked {
	cs := []cand{{s: in}}
	var w walked
	last := prev // the previous waypoint that is a label or symbol
	for _, p := range wps {
		if !p.known {
			var next []cand
			for _, c := range cs {
				for _, s := range roundings(c.s, p.align) {
					at := c.at
					if s != c.s {
						at = boundary(s, c.s)
					}
					if !slices.ContainsFunc(next, func(x cand) bool { return x.s == s }) && len(next) < maxCands {
						next = append(next, cand{s, at})
					}
				}
			}
			cs = next
			continue
		}
		best := -1
		for k, c := range cs {
			if rounds(p.shift, c.s, p.align) && (best < 0 || c.s == p.shift) {
				best = k
			}
		}
		if best < 0 && p.label != "" {
			// The distance between the last label (or symbol) and this one
			// changed: data with no sized symbol of its own.
			near := 0
			for k, c := range cs {
				if abs64(p.shift-c.s) < abs64(p.shift-cs[near].s) {
					near = k
				}
			}
			reg := Cause{Kind: Table, Bytes: p.shift - cs[near].s, Count: 1, Until: p.label}
			if strings.HasPrefix(last, "label ") {
				reg.Table = strings.TrimPrefix(last, "label ")
			} else {
				reg.After = last
			}
			w.regions = append(w.regions, reg)
			cs = []cand{{s: p.shift, at: cs[near].at}}
			last = "label " + p.label
			continue
		}
		if best < 0 {
			w.why = fmt.Sprintf("at %s the shift is %+d, but %s %s: not a re-rounding at a boundary of at most %d bytes (the largest power of two dividing its addresses)",
				p.name, p.shift, shifts(cs), reached(cs), p.align)
			return w
		}
		at := cs[best].at
		if cs[best].s != p.shift {
			at = boundary(p.shift, cs[best].s)
		}
		s := p.shift
		if p.table != nil {
			s += p.table.SizeChange
		}
		cs = []cand{{s: s, at: at}}
		if p.label != "" {
			last = "label " + p.label
		}
	}
	w.ok, w.at = true, cs[0].at
	return w
}

func shifts(cs []cand) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%+d", c.s))
	}
	return strings.Join(out, " or ")
}

func reached(cs []cand) string {
	if len(cs) == 1 {
		return "reached it"
	}
	return "could have reached it"
}

// waypoints lists the places between pred and f where the shift may
// change, in B's address order, f last.
func (t *tracer) waypoints(pred, f *Change) []waypoint {
	var wps []waypoint
	if t.elf && (pred == nil || pred.B.Section != f.B.Section) {
		for _, sc := range t.secs {
			if sc.B.Addr > f.B.Addr {
				break
			}
			if pred != nil && sc.B.Addr < pred.B.Addr || sc.B == f.B.Section || addrSpace(sc.B) != addrSpace(f.B.Section) ||
				!t.bare[sc.B] || sc.A.Size == 0 && sc.B.Size == 0 {
				continue
			}
			wps = append(wps, waypoint{addr: sc.B.Addr, known: true, shift: sc.Shift, align: alignOf(sc.A.Addr, sc.B.Addr), table: sc,
				name: "the start of section " + sc.Name})
		}
		if sc := t.byName[f.B.Section.Name]; sc != nil {
			wps = append(wps, waypoint{addr: sc.B.Addr, known: true, shift: sc.Shift, align: alignOf(sc.A.Addr, sc.B.Addr),
				name: "the start of section " + sc.Name})
		}
	}
	wps = append(wps, t.labelPoints(pred, f)...)
	// Symbols B has that A holds under another name: alignment points
	// whose shift is not known.
	b := t.d.B
	var labels []waypoint
	for k := f.ib - 1; k >= 0 && f.ib-k <= maxScan && len(labels) < maxLabels; k-- {
		s := &b.Symbols[k]
		if s.Section != f.B.Section || pred != nil && s.Addr <= pred.B.Addr {
			break
		}
		if t.matchB[k] == aliasOnly && s.Addr < f.B.Addr {
			labels = append(labels, waypoint{addr: s.Addr, align: alignOf(s.Addr), name: "label " + s.Name})
		}
	}
	wps = append(wps, labels...)
	sort.SliceStable(wps, func(i, j int) bool { return wps[i].addr < wps[j].addr })
	return append(wps, waypoint{addr: f.B.Addr, known: true, shift: f.Shift(), align: alignOf(f.A.Addr, f.B.Addr), name: f.Name()})
}

// labelPoints returns B's labels between pred's end and f, in sections
// that hold sized symbols (a section without any is a table of its own,
// see waypoints): known shifts when A has the label too, else alignment
// points (at most maxLabels of them).
func (t *tracer) labelPoints(pred, f *Change) []waypoint {
	ls := t.d.B.Labels
	if len(ls) == 0 {
		return nil
	}
	if t.labelsA == nil {
		t.labelsA = make(map[string]*Label, len(t.d.A.Labels))
		for i := range t.d.A.Labels {
			t.labelsA[t.d.A.Labels[i].Name] = &t.d.A.Labels[i]
		}
	}
	var lo uint64
	if pred != nil {
		lo = max(pred.B.End(), pred.B.Addr+1)
	}
	var out []waypoint
	unknown := 0
	for k := sort.Search(len(ls), func(k int) bool { return ls[k].Addr >= lo }); k < len(ls) && ls[k].Addr < f.B.Addr; k++ {
		l := &ls[k]
		if addrSpace(l.Section) != addrSpace(f.B.Section) || t.bare[l.Section] {
			continue
		}
		if la := t.labelsA[l.Name]; la != nil && la.Section.Name == l.Section.Name {
			out = append(out, waypoint{addr: l.Addr, known: true, shift: int64(l.Addr - la.Addr), align: alignOf(l.Addr, la.Addr),
				label: l.Name, name: "label " + l.Name})
		} else if l.Section == f.B.Section && unknown < maxLabels {
			unknown++
			out = append(out, waypoint{addr: l.Addr, align: alignOf(l.Addr), name: "label " + l.Name})
		}
	}
	return out
}

// breakWhy says why run r, whose causes are padding only, has no earlier
// change to explain it: what reached it, through which points, and the
// neighbours' sizes and gaps in both builds.
func (t *tracer) breakWhy(r *Run, pred *Change, in int64, w walked) string {
	f := r.First
	if pred == nil {
		return fmt.Sprintf("nothing lies before %s in B's address order (the first symbol of its address space), so no shift reached it", f.Name())
	}
	from := ""
	if pred.Run >= 0 {
		pr := &t.d.Runs[pred.Run]
		from = fmt.Sprintf(", the last of the %+d run from %s", pr.Shift, pr.First.Name())
	}
	gapA := int64(f.A.Addr) - int64(pred.A.End())
	gapB := int64(f.B.Addr) - int64(pred.B.End())
	size := fmt.Sprintf("%d bytes in both builds", pred.A.Size)
	if pred.A.Size != pred.B.Size {
		size = fmt.Sprintf("%d bytes in A, %d in B", pred.A.Size, pred.B.Size)
	}
	s := fmt.Sprintf("the symbol before it, %s (%s%s), moved %+d; the gap between them is %d bytes in A and %d in B", pred.Name(), size, from, in, gapA, gapB)
	if pred.B.Section != f.B.Section {
		s += fmt.Sprintf(" (across the end of %s)", pred.B.Section.Name)
	}
	switch {
	case in == 0:
		s += fmt.Sprintf("; a shift of 0 stays 0 at every boundary, and no symbol or label of either build in the gap changed size, so the padding before %s changed by itself (%+d bytes: an alignment of its own, such as -falign-functions, or data without a symbol)",
			f.Name(), gapB-gapA)
	case !w.ok:
		s += "; " + w.why
	default:
		s += "; the run before it has no root change of its own"
	}
	return s
}
