// The in-depth analysis of the top changes: their loops, paired across the
// builds, and their source lines.

package layout

import (
	"debug/elf"
	"fmt"
	"sort"
)

// analyse finds the loops and source lines of the top-ranked, hottest and
// requested symbols, then re-ranks with the loop changes.
func (d *DiffResult) analyse(opt DiffOptions) {
	var todo []*Change
	seen := map[*Change]bool{}
	add := func(c *Change) {
		if !seen[c] {
			seen[c] = true
			todo = append(todo, c)
		}
	}
	for i, c := range d.Ranked {
		if i >= opt.Top {
			break
		}
		add(c)
	}
	if opt.Hot != nil {
		var hot []*Change
		for i := range d.Changes {
			if d.Changes[i].Hot > 0 {
				hot = append(hot, &d.Changes[i])
			}
		}
		sort.SliceStable(hot, func(i, j int) bool { return hot[i].Hot > hot[j].Hot })
		for i, c := range hot {
			if i >= opt.Top {
				break
			}
			add(c)
		}
	}
	if len(opt.Symbols) > 0 {
		want := map[string]bool{}
		for _, s := range opt.Symbols {
			want[s] = true
		}
		for i := range d.Changes {
			c := &d.Changes[i]
			if want[c.A.Name] || want[c.B.Name] {
				add(c)
			}
		}
	}
	var loopErrA, loopErrB error
	noCode := d.A.Format != ELF || d.B.Format != ELF // said once in the notes
	if !noCode && (d.A.machine != uint16(elf.EM_X86_64) || d.B.machine != uint16(elf.EM_X86_64)) {
		noCode = true
		d.Notes = append(d.Notes, fmt.Sprintf("loops: finding loops in %s code is not supported yet (x86-64 only)", d.B.Arch))
	}
	for _, c := range todo {
		c.Analysed = true
		if c.B.Kind != Func || noCode {
			continue
		}
		var la, lb []LoopPos
		la, loopErrA = d.A.loops(c.A)
		lb, loopErrB = d.B.loops(c.B)
		switch {
		case loopErrA != nil:
			c.LoopsNote = "A: " + loopErrA.Error()
		case loopErrB != nil:
			c.LoopsNote = "B: " + loopErrB.Error()
		default:
			c.Loops = pairLoops(la, lb)
			if len(c.Loops) == 0 {
				c.LoopsNote = "no loops"
			}
		}
		c.Weight = max(c.Weight, loopWeight(c.Loops))
	}
	if !opt.NoSource {
		d.sources(todo, opt.MaxDWARF)
	}
	d.sortRanked(opt.Hot != nil)
}

// pairLoops pairs the loops of a function's two builds. With as many loops
// in both they pair by position; otherwise by the longest common
// subsequence of (length, depth), so that a loop added in between does not
// shift every pairing (by position again when nothing is in common). Loops
// left over get a nil partner. Index numbers the pairs in order.
func pairLoops(la, lb []LoopPos) []LoopChange {
	same := func(x, y *LoopPos) bool { return x.Len == y.Len && x.Depth == y.Depth }
	byPosition := func() []LoopChange {
		var out []LoopChange
		for i := 0; i < max(len(la), len(lb)); i++ {
			var lc LoopChange
			if i < len(la) {
				lc.A = &la[i]
			}
			if i < len(lb) {
				lc.B = &lb[i]
			}
			out = append(out, lc)
		}
		return numberLoops(out)
	}
	if len(la) == len(lb) || len(la) == 0 || len(lb) == 0 || len(la)*len(lb) > 1<<16 {
		return byPosition()
	}
	// LCS table: l[i][j] is the LCS length of la[i:] and lb[j:].
	n, m := len(la), len(lb)
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if same(&la[i], &lb[j]) {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	if l[0][0] == 0 {
		return byPosition()
	}
	var out []LoopChange
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && same(&la[i], &lb[j]) && l[i][j] == l[i+1][j+1]+1:
			out = append(out, LoopChange{A: &la[i], B: &lb[j]})
			i++
			j++
		case j < m && (i == n || l[i][j+1] >= l[i+1][j]):
			out = append(out, LoopChange{B: &lb[j]})
			j++
		default:
			out = append(out, LoopChange{A: &la[i]})
			i++
		}
	}
	return numberLoops(out)
}

func numberLoops(ls []LoopChange) []LoopChange {
	for i := range ls {
		ls[i].Index = i + 1
	}
	return ls
}

// sources sets the source lines of the analysed changes and their loops.
func (d *DiffResult) sources(todo []*Change, maxDWARF int64) {
	if len(todo) == 0 {
		return
	}
	tb := d.B.loadDWARF(maxDWARF)
	ta := d.A.loadDWARF(maxDWARF)
	if tb.err != nil && d.B.Format == ELF {
		d.Notes = append(d.Notes, "source lines: "+tb.err.Error())
	}
	want := map[uint64]bool{}
	for _, c := range todo {
		if c.B.Kind == Object {
			want[c.B.Addr] = true
		}
	}
	if len(want) > 0 {
		tb.varLines(want)
	}
	for _, c := range todo {
		if c.B.Kind == Object {
			c.Source = tb.vars[c.B.Addr]
			continue
		}
		c.Source = tb.pcLine(c.B.Addr)
		for i := range c.Loops {
			if l := c.Loops[i].A; l != nil {
				l.Source = ta.pcLine(l.Start)
			}
			if l := c.Loops[i].B; l != nil {
				l.Source = tb.pcLine(l.Start)
			}
		}
	}
}
