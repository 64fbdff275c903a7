package layout

import (
	"cmp"
	"slices"
	"strings"
)

// matchEntry is one symbol under its matching key.
type matchEntry struct {
	key  string
	kind Kind
	file string
	ord  int32
	idx  int32
}

func compareEntry(x, y matchEntry) int {
	if c := strings.Compare(x.key, y.key); c != 0 {
		return c
	}
	if c := cmp.Compare(x.kind, y.kind); c != 0 {
		return c
	}
	if c := strings.Compare(x.file, y.file); c != 0 {
		return c
	}
	return cmp.Compare(x.ord, y.ord)
}

// match pairs the symbols of a and b. It returns, for each symbol of a,
// the index of its partner in b (or -1), and the same for b.
//
// The rules, in order:
//  1. same [MatchKey] and kind; when several symbols share them (local
//     symbols of the same name), those from the same source file pair up in
//     symbol-table order, and a single leftover on each side pairs too;
//  2. for what is left, the same [BaseName] and kind when exactly one
//     symbol on each side has it (foo ↔ foo.isra.0);
//  3. an empty symbol left over whose name the other build has as an alias
//     (or the other way round) gets [aliasOnly] instead of a partner: two
//     labels that share an address in one build only, such as the kernel's
//     __stop___param and __start___ex_table when the padding between the
//     sections changed. It is neither added nor removed.
func match(a, b *Binary) (matchA, matchB []int32) {
	matchA = filled(len(a.Symbols))
	matchB = filled(len(b.Symbols))
	pair := func(ia, ib int32) { matchA[ia], matchB[ib] = ib, ia }

	ea := entries(a, nil, MatchKey)
	eb := entries(b, nil, MatchKey)
	mergeGroups(ea, eb, func(ga, gb []matchEntry) {
		if len(ga) == 1 && len(gb) == 1 {
			pair(ga[0].idx, gb[0].idx)
			return
		}
		// By source file, in order.
		var la, lb []matchEntry
		i, j := 0, 0
		for i < len(ga) || j < len(gb) {
			switch {
			case j == len(gb) || (i < len(ga) && ga[i].file < gb[j].file):
				la = append(la, ga[i])
				i++
			case i == len(ga) || gb[j].file < ga[i].file:
				lb = append(lb, gb[j])
				j++
			default:
				pair(ga[i].idx, gb[j].idx)
				i++
				j++
			}
		}
		if len(la) == 1 && len(lb) == 1 {
			pair(la[0].idx, lb[0].idx)
		}
	})

	ea = entries(a, matchA, BaseName)
	eb = entries(b, matchB, BaseName)
	mergeGroups(ea, eb, func(ga, gb []matchEntry) {
		if len(ga) == 1 && len(gb) == 1 {
			pair(ga[0].idx, gb[0].idx)
		}
	})
	markAliases(a, b, matchA)
	markAliases(b, a, matchB)
	return matchA, matchB
}

// Values of a match slice for a symbol with no partner.
const (
	unmatched = -1 // added (in B) or removed (from A)
	aliasOnly = -2 // an empty label the other build has under another name
)

// markAliases sets m[i] to aliasOnly for each empty symbol of x with no
// partner that has a name (its own or an alias) among the names and
// aliases of other's symbols.
func markAliases(x, other *Binary, m []int32) {
	var names map[string]bool
	for i := range x.Symbols {
		s := &x.Symbols[i]
		if m[i] != unmatched || s.Size != 0 {
			continue
		}
		if names == nil {
			names = make(map[string]bool, 2*len(other.Symbols))
			for j := range other.Symbols {
				o := &other.Symbols[j]
				names[o.Name] = true
				for _, al := range o.Aliases {
					names[al] = true
				}
			}
		}
		if names[s.Name] {
			m[i] = aliasOnly
			continue
		}
		for _, al := range s.Aliases {
			if names[al] {
				m[i] = aliasOnly
				break
			}
		}
	}
}

func filled(n int) []int32 {
	m := make([]int32, n)
	for i := range m {
		m[i] = unmatched
	}
	return m
}

// entries lists b's symbols not yet matched (all when matched is nil)
// under keyOf, sorted.
func entries(b *Binary, matched []int32, keyOf func(string) string) []matchEntry {
	out := make([]matchEntry, 0, len(b.Symbols))
	for i := range b.Symbols {
		if matched != nil && matched[i] >= 0 {
			continue
		}
		s := &b.Symbols[i]
		out = append(out, matchEntry{key: keyOf(s.Name), kind: s.Kind, file: s.File, ord: s.ord, idx: int32(i)})
	}
	slices.SortFunc(out, compareEntry)
	return out
}

// mergeGroups calls fn for each (key, kind) present in both sorted lists,
// with the entries of each side.
func mergeGroups(ea, eb []matchEntry, fn func(ga, gb []matchEntry)) {
	i, j := 0, 0
	for i < len(ea) && j < len(eb) {
		c := strings.Compare(ea[i].key, eb[j].key)
		if c == 0 {
			c = int(ea[i].kind) - int(eb[j].kind)
		}
		switch {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			i2, j2 := i+1, j+1
			for i2 < len(ea) && ea[i2].key == ea[i].key && ea[i2].kind == ea[i].kind {
				i2++
			}
			for j2 < len(eb) && eb[j2].key == eb[j].key && eb[j2].kind == eb[j].kind {
				j2++
			}
			fn(ea[i:i2], eb[j:j2])
			i, j = i2, j2
		}
	}
}
