// Ranking root changes by what they explain.

package layout

import (
	"cmp"
	"slices"
)

// traced reports whether the causes name what changed, not only padding
// or a section start.
func traced(cs []Cause) bool {
	for _, c := range cs {
		switch c.Kind {
		case Added, Removed, Resized, Reordered, Table:
			return true
		}
	}
	return false
}

// rankRoots orders root changes by what they explain: the profile
// hotness of what they moved (with a profile), then the symbols moved,
// then the bytes, then their best-ranked victim. An untraced change goes
// no higher than just after the last traced one that moved more.
func rankRoots(rcs []RootChange) []RootChange {
	slices.SortStableFunc(rcs, func(a, b RootChange) int {
		if c := cmp.Compare(b.Hot, a.Hot); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Moved, a.Moved); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Bytes, a.Bytes); c != 0 {
			return c
		}
		return cmp.Compare(a.first, b.first)
	})
	// most[i]: the most symbols a traced change in rcs[i:] moved.
	most := make([]int, len(rcs)+1)
	for i := len(rcs) - 1; i >= 0; i-- {
		most[i] = most[i+1]
		if rcs[i].Traced {
			most[i] = max(most[i], rcs[i].Moved)
		}
	}
	out := make([]RootChange, 0, len(rcs))
	var waiting []int // untraced changes held back, in rank order
	for i := range rcs {
		if !rcs[i].Traced && most[i] > rcs[i].Moved {
			waiting = append(waiting, i)
			continue
		}
		out = append(out, rcs[i])
		if rcs[i].Traced && len(waiting) > 0 {
			kept := waiting[:0]
			for _, k := range waiting {
				if most[i+1] > rcs[k].Moved {
					kept = append(kept, k)
				} else {
					out = append(out, rcs[k])
				}
			}
			waiting = kept
		}
	}
	for _, k := range waiting {
		out = append(out, rcs[k])
	}
	return out
}
