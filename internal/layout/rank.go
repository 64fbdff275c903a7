// Ranking: the alignment-class weights, and scoring and ordering the
// changes by them (and by hotness).

package layout

import (
	"cmp"
	"fmt"
	"slices"
)

// Alignment-class weights, from least to most likely to matter.
const (
	WeightNone       = 0   // same address mod 4096 and same lines
	WeightPage       = 0.1 // moved, same offset mod 64, different mod 4096
	WeightOff64      = 1   // offset mod 64 changed, same offset mod 32
	WeightOff32      = 2   // offset mod 32 changed
	WeightLines      = 3   // touches a different number of lines, or straddling changed
	WeightOuterLoop  = 2.5 // an outer loop's line offset or crossing changed
	WeightInnerLoop  = 3.5 // an inner loop's line offset changed
	WeightInnerCross = 4   // an inner loop crosses a line in one build only
)

// classWeight grades how much a symbol's placement class changed.
func classWeight(a, b *Symbol) float64 {
	switch {
	case a.Lines() != b.Lines() || a.Straddles() != b.Straddles():
		return WeightLines
	case a.Off(32) != b.Off(32):
		return WeightOff32
	case a.Off(64) != b.Off(64):
		return WeightOff64
	case a.Off(4096) != b.Off(4096):
		return WeightPage
	}
	return WeightNone
}

// loopWeight grades the loop changes of an analysed function.
func loopWeight(loops []LoopChange) float64 {
	w := 0.0
	for i := range loops {
		l := &loops[i]
		if l.A == nil || l.B == nil || !l.Changed() {
			continue
		}
		var lw float64
		switch {
		case l.Inner() && l.A.Crosses != l.B.Crosses:
			lw = WeightInnerCross
		case l.Inner():
			lw = WeightInnerLoop
		default:
			lw = WeightOuterLoop
		}
		w = max(w, lw)
	}
	return w
}

// rank scores every change and fills d.Ranked.
func (d *DiffResult) rank(opt DiffOptions) {
	// Profile lookups clean and regex-match names; most symbols are not in
	// the profile, so filter by base name first.
	var inProfile map[string]bool
	if opt.Hot != nil {
		inProfile = make(map[string]bool, len(opt.Hot.Funcs))
		for fn := range opt.Hot.Funcs {
			inProfile[BaseName(fn)] = true
		}
	}
	mayBeHot := func(s *Symbol) bool {
		if inProfile[BaseName(s.Name)] {
			return true
		}
		for _, al := range s.Aliases {
			if inProfile[BaseName(al)] {
				return true
			}
		}
		return false
	}
	cold := 0
	for i := range d.Changes {
		c := &d.Changes[i]
		c.Weight = classWeight(c.A, c.B)
		if c.A.Size == 0 && c.B.Size == 0 {
			c.Weight = min(c.Weight, WeightPage) // a label: no bytes to slow down
		}
		if c.Weight > WeightPage && (coldTable(c.A) || coldTable(c.B)) {
			c.Weight = WeightPage // read at boot or module load only
			cold++
		}
		if opt.Hot != nil && c.B.Kind == Func && (mayBeHot(c.B) || mayBeHot(c.A)) {
			c.Hot = opt.Hot.Of(c.B.Name)
			if c.Hot == 0 && c.A.Name != c.B.Name {
				c.Hot = opt.Hot.Of(c.A.Name)
			}
			for _, al := range c.B.Aliases {
				if c.Hot != 0 {
					break
				}
				c.Hot = opt.Hot.Of(al)
			}
		}
	}
	if cold > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d changes in kernel tables no hot path reads (.init.*, __ksymtab*, __param, .notes, ...) ranked last", cold))
	}
	d.sortRanked(opt.Hot != nil)
}

func (d *DiffResult) sortRanked(withProfile bool) {
	d.Ranked = d.Ranked[:0]
	for i := range d.Changes {
		c := &d.Changes[i]
		if withProfile {
			// A hot function that only moved within its page keeps its
			// lines: it ranks with the unprofiled changes, by weight.
			c.Score = 0
			if c.Weight >= WeightOff64 {
				c.Score = c.Hot * c.Weight
			}
		} else {
			c.Score = c.Weight
		}
		if c.Weight > 0 || c.Hot > 0 {
			d.Ranked = append(d.Ranked, c)
		}
	}
	slices.SortStableFunc(d.Ranked, func(x, y *Change) int {
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Weight, x.Weight); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Hot, x.Hot); c != 0 {
			return c
		}
		return cmp.Compare(x.B.Kind, y.B.Kind) // functions first, then B's address order
	})
}
