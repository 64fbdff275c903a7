// False-sharing candidates: writable objects that share a 64-byte line in
// one build only.

package layout

import (
	"cmp"
	"slices"
)

// SharedLine is a pair of writable objects that share a 64-byte line in
// one build only.
type SharedLine struct {
	X, Y *Change
	// Gained is true when they share a line in B but not in A.
	Gained bool
	// Line is the address of the shared line in the build where they
	// share one.
	Line uint64
}

// findShared lists the pairs of matched writable objects that share a
// 64-byte line in one build but not in the other.
func (d *DiffResult) findShared() {
	var objs []int32 // change indices of writable objects
	for i := range d.Changes {
		c := &d.Changes[i]
		if c.A.Kind == Object && c.B.Kind == Object && c.A.Size > 0 && c.B.Size > 0 && c.A.Writable() && c.B.Writable() {
			objs = append(objs, int32(i))
		}
	}
	pairsA := d.sharedPairs(objs, func(c *Change) *Symbol { return c.A })
	pairsB := d.sharedPairs(objs, func(c *Change) *Symbol { return c.B })
	i, j := 0, 0
	for i < len(pairsA) || j < len(pairsB) {
		switch {
		case j == len(pairsB) || (i < len(pairsA) && pairsA[i].key < pairsB[j].key):
			p := pairsA[i]
			d.Shared = append(d.Shared, SharedLine{X: &d.Changes[p.key>>32], Y: &d.Changes[p.key&0xffffffff], Line: p.line})
			i++
		case i == len(pairsA) || pairsB[j].key < pairsA[i].key:
			p := pairsB[j]
			d.Shared = append(d.Shared, SharedLine{X: &d.Changes[p.key>>32], Y: &d.Changes[p.key&0xffffffff], Line: p.line, Gained: true})
			j++
		default:
			i++
			j++
		}
	}
	for _, s := range d.Shared {
		if s.Gained {
			d.Stats.SharedGained++
		} else {
			d.Stats.SharedLost++
		}
	}
}

type linePair struct{ key, line uint64 }

// maxSharedScan bounds the objects looked at after each object: at most
// 64 non-overlapping objects start in one line, and the bound keeps
// inputs with many overlapping objects linear.
const maxSharedScan = 256

// sharedPairs returns, sorted by key, the pairs of objects (as change
// indices packed lo<<32|hi) that share a 64-byte line in the build side
// picks.
func (d *DiffResult) sharedPairs(objs []int32, side func(*Change) *Symbol) []linePair {
	sorted := append([]int32(nil), objs...)
	slices.SortFunc(sorted, func(i, j int32) int {
		return cmp.Compare(side(&d.Changes[i]).Addr, side(&d.Changes[j]).Addr)
	})
	var pairs []linePair
	for i, ci := range sorted {
		si := side(&d.Changes[ci])
		lastLine := (si.End() - 1) / LineSize
		for k, cj := range sorted[i+1:] {
			sj := side(&d.Changes[cj])
			first := sj.Addr / LineSize
			if first > lastLine || k >= maxSharedScan {
				break
			}
			if sj.Addr < si.End() {
				continue // overlapping objects (unions, aliases), not two neighbours
			}
			lo, hi := uint64(ci), uint64(cj)
			if lo > hi {
				lo, hi = hi, lo
			}
			pairs = append(pairs, linePair{key: lo<<32 | hi, line: first * LineSize})
		}
	}
	slices.SortFunc(pairs, func(x, y linePair) int { return cmp.Compare(x.key, y.key) })
	return pairs
}
