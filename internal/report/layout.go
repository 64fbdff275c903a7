package report

import (
	"sort"
	"strings"

	"github.com/perfbot/perfbot/internal/layout"
)

// LayoutOptions selects what the layout writers print. Zero values pick
// the defaults; a negative count means all.
type LayoutOptions struct {
	// Top is how many ranked changes to print (default 10).
	Top int
	// Runs is how many shift runs to print (default 8); runs with no
	// shift are never printed.
	Runs int
	// Roots is how many root changes to print (default 5).
	Roots int
	// Pairs is how many false-sharing candidate pairs to print (default 6).
	Pairs int
	// Symbol, when set, is printed first in full detail.
	Symbol string
	// Padding, when set, is described at the end of the text report and
	// included in the JSON.
	Padding *layout.Padding
}

func (o LayoutOptions) layoutLimits() (top, runs, pairs int) {
	top, runs, pairs = o.Top, o.Runs, o.Pairs
	if top == 0 {
		top = 10
	}
	if runs == 0 {
		runs = 8
	}
	if pairs == 0 {
		pairs = 6
	}
	return top, runs, pairs
}

func (o LayoutOptions) rootLimit() int {
	if o.Roots == 0 {
		return 5
	}
	return o.Roots
}

// layoutCap returns n cut to limit (negative limit: no cut).
func layoutCap(n, limit int) int {
	if limit >= 0 && n > limit {
		return limit
	}
	return n
}

// layoutRunOrder returns the runs that moved, by root change (in rank
// order; within one, each root run followed by the runs it was carried
// into), then any others largest first.
func layoutRunOrder(d *layout.DiffResult) []*layout.Run {
	var out []*layout.Run
	seen := make([]bool, len(d.Runs))
	for k := range d.RootChanges {
		for _, i := range d.RootChanges[k].Runs {
			if !seen[i] && d.Runs[i].Shift != 0 {
				seen[i] = true
				out = append(out, &d.Runs[i])
			}
		}
	}
	var rest []*layout.Run
	for i := range d.Runs {
		if !seen[i] && d.Runs[i].Shift != 0 {
			rest = append(rest, &d.Runs[i])
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].Count > rest[j].Count })
	return append(out, rest...)
}

// layoutPairOrder puts gained pairs of small objects (counters, locks)
// first.
func layoutPairOrder(ps []layout.SharedLine) []layout.SharedLine {
	out := append([]layout.SharedLine(nil), ps...)
	small := func(p layout.SharedLine) bool { return p.X.B.Size <= 64 && p.Y.B.Size <= 64 }
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Gained != out[j].Gained {
			return out[i].Gained
		}
		return small(out[i]) && !small(out[j])
	})
	return out
}

// layoutWhy says in a few words why a change ranks where it does.
func layoutWhy(c *layout.Change) string {
	var why []string
	for i := range c.Loops {
		l := &c.Loops[i]
		if l.A != nil && l.B != nil && l.Changed() && l.Inner() {
			if l.A.Crosses != l.B.Crosses {
				why = append(why, "inner loop now "+layoutCrossWord(l.B.Crosses)+" a line")
			} else {
				why = append(why, "inner loop moved in its line")
			}
			break
		}
	}
	switch {
	case c.B.Straddles() && !c.A.Straddles():
		why = append(why, "now straddles a line")
	case c.A.Straddles() && !c.B.Straddles():
		why = append(why, "no longer straddles a line")
	case c.LinesChanged():
		why = append(why, "touches a different number of lines")
	case c.A.Off(32) != c.B.Off(32):
		why = append(why, "offset mod 32 changed")
	case c.Off64Changed():
		why = append(why, "offset mod 64 changed")
	case c.A.Off(4096) != c.B.Off(4096):
		why = append(why, "same line offset, page offset changed")
	case c.Weight == 0 && c.Hot > 0:
		why = append(why, "hot, placement unchanged")
	}
	return strings.Join(why, "; ")
}
