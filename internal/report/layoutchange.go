// One ranked change of a layout diff in the text report: its placement in
// both builds, why it ranks, and its loops.

package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/perfbot/perfbot/internal/layout"
)

func layoutCrossWord(crosses bool) string {
	if crosses {
		return "crosses"
	}
	return "fits in"
}

func layoutChangeText(b *bytes.Buffer, d *layout.DiffResult, rank int, c *layout.Change) {
	name := c.Name()
	if c.B.Local && c.B.File != "" {
		name += " in " + c.B.File
	}
	if c.A.Name != c.B.Name {
		name += " (was " + c.A.Name + ")"
	}
	fmt.Fprintf(b, "  %2d. %s  %s %s", rank, name, c.B.Section.Name, c.B.Kind)
	if c.Hot > 0 {
		fmt.Fprintf(b, ", %.1f%% of profile", 100*c.Hot)
	}
	if c.Source != "" {
		fmt.Fprintf(b, ", %s", layoutShortSource(c.Source))
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "      %#x -> %#x (shift %+d): offset mod 64 %d -> %d, mod 32 %d -> %d, mod 4096 %d -> %d, lines %d -> %d",
		c.A.Addr, c.B.Addr, c.Shift(), c.A.Off(64), c.B.Off(64), c.A.Off(32), c.B.Off(32), c.A.Off(4096), c.B.Off(4096),
		c.A.Lines(), c.B.Lines())
	if c.A.Size != c.B.Size {
		fmt.Fprintf(b, ", size %d -> %d", c.A.Size, c.B.Size)
	} else {
		fmt.Fprintf(b, ", size %d", c.B.Size)
	}
	b.WriteString("\n")
	if why := layoutWhy(c); why != "" {
		fmt.Fprintf(b, "      %s", why)
		if c.Run >= 0 && d.Runs[c.Run].Shift != 0 {
			r := &d.Runs[c.Run]
			fmt.Fprintf(b, " (shift run from %s: %s", r.First.Name(), layoutRunCauses(r))
			if r.Carried {
				fmt.Fprintf(b, "; %s; %s", layoutCarry(d, r, false), layoutRootRef(d, r))
			} else if rc := d.RootOf(c); rc != nil && len(rc.Roots) > 1 {
				fmt.Fprintf(b, "; %s", layoutRootRef(d, r))
			}
			b.WriteString(")")
		}
		b.WriteString("\n")
	}
	loops := layoutLoopOrder(c.Loops)
	const maxLoops = 3
	for i, l := range loops {
		if i == maxLoops {
			fmt.Fprintf(b, "      ... %d more loops\n", len(loops)-maxLoops)
			break
		}
		layoutLoopText(b, c, l)
	}
	if c.Analysed && c.B.Kind == layout.Func && len(c.Loops) == 0 && c.LoopsNote != "" && c.LoopsNote != "no loops" {
		fmt.Fprintf(b, "      loops: %s\n", c.LoopsNote)
	}
}

// layoutLoopOrder puts the loops whose placement changed first, inner
// ones before outer ones, then by position.
func layoutLoopOrder(ls []layout.LoopChange) []*layout.LoopChange {
	out := make([]*layout.LoopChange, len(ls))
	for i := range ls {
		out[i] = &ls[i]
	}
	rank := func(l *layout.LoopChange) int {
		switch {
		case l.Changed() && l.Inner():
			return 0
		case l.Changed():
			return 1
		}
		return 2
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

func layoutLoopText(b *bytes.Buffer, c *layout.Change, l *layout.LoopChange) {
	kind := "outer"
	if l.Inner() {
		kind = "inner"
	}
	switch {
	case l.A == nil:
		fmt.Fprintf(b, "      loop %d (%s, %d bytes) only in B: at %s+%#x, line offset %d, %s a line\n",
			l.Index, kind, l.B.Len, c.B.Name, l.B.FuncOff, l.B.LineOff, layoutCrossWord(l.B.Crosses))
		return
	case l.B == nil:
		fmt.Fprintf(b, "      loop %d (%s, %d bytes) only in A: at %s+%#x, line offset %d, %s a line\n",
			l.Index, kind, l.A.Len, c.A.Name, l.A.FuncOff, l.A.LineOff, layoutCrossWord(l.A.Crosses))
		return
	}
	src := ""
	if l.B.Source != "" {
		src = ", " + layoutShortSource(l.B.Source)
	}
	mark := ""
	if !l.Changed() {
		mark = " (unchanged)"
	}
	fmt.Fprintf(b, "      loop %d (%s, %d bytes%s) at %s+%#x: %#x -> %#x, line offset %d -> %d, %s -> %s a line%s\n",
		l.Index, kind, l.B.Len, src, c.B.Name, l.B.FuncOff, l.A.Start, l.B.Start, l.A.LineOff, l.B.LineOff,
		layoutCrossWord(l.A.Crosses), layoutCrossWord(l.B.Crosses), mark)
}

// layoutShortSource keeps the file's base name and the line.
func layoutShortSource(s string) string {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return filepath.Base(s)
	}
	return filepath.Base(s[:i]) + s[i:]
}
