package plot

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// LayoutPoint is the layout summary of one tested commit (what perfbot
// watch stores beside its figures): its artifact's section sizes and the
// offsets, modulo 64, of its biggest functions. A commit without one (no
// artifact, or a build that was not read) has neither.
type LayoutPoint struct {
	Commit   string // short hash
	Sections map[string]uint64
	Offsets  map[string]uint64
}

// LayoutOptions shape a layout history. Width, From and To must be the
// history plot's, so that the columns line up with its points.
type LayoutOptions struct {
	Width    int
	From, To int
	// Sections are the sections drawn, in order (default: .text, .rodata,
	// .data, .bss, those present).
	Sections []string
	// Funcs is the most functions whose offsets are drawn (default 6):
	// those whose offset moves in the window first, then the most often
	// present.
	Funcs      int
	Standalone bool
	// MaxPoints is the most commits drawn with a dot each (default 60);
	// above, only the moves are dots (each with its tooltip), which keeps
	// a zoom of a few hundred commits light.
	MaxPoints int
}

const (
	sectionRow = 30.0
	offsetRow  = 34.0
)

// LayoutHistory draws, under a metric's history and on its x axis, the
// layout of each tested commit: a row per section with its size, and a row
// per hot function with its offset in its 64-byte line (0 to 63), a dot
// marked where it moved. A step in the metric that lines up with a move
// here is the first suspect of an alignment change.
func LayoutHistory(w io.Writer, pts []LayoutPoint, opt LayoutOptions) error {
	if len(pts) == 0 {
		return fmt.Errorf("plot: layout history: no tested commit")
	}
	if opt.MaxPoints == 0 {
		opt.MaxPoints = 60
	}
	if opt.Funcs == 0 {
		opt.Funcs = 6
	}
	width := float64(opt.Width)
	if width <= 0 {
		width = 960
	}
	from, to := HistoryOptions{From: opt.From, To: opt.To}.Window(len(pts))
	win := pts[from:to]
	n := len(win)
	left, slot := slots(width, n)
	x := func(i int) float64 { return left + (float64(i)+0.5)*slot }

	secs := opt.Sections
	if len(secs) == 0 {
		for _, s := range []string{".text", ".rodata", ".data", ".bss"} {
			if slices.ContainsFunc(win, func(p LayoutPoint) bool { _, ok := p.Sections[s]; return ok }) {
				secs = append(secs, s)
			}
		}
	}
	funcs := pickFuncs(win, opt.Funcs)
	height := 24 + sectionRow*float64(len(secs)) + 18 + offsetRow*float64(len(funcs)) + 8

	var c canvas
	c.open(width, height, "layout", fmt.Sprintf("layout of %d tested commits: %d sections, %d functions", n, len(secs), len(funcs)),
		"data-points", strconv.Itoa(n), "data-from", strconv.Itoa(from), "data-to", strconv.Itoa(to),
		"data-left", strconv.FormatFloat(left, 'f', 3, 64), "data-slot", strconv.FormatFloat(slot, 'f', 6, 64))
	if opt.Standalone {
		c.style()
	}
	c.text(left, 14, "start", "ttl", "layout: section sizes (bytes) and offsets mod 64 of the biggest functions")
	y := 24.0
	for _, sec := range secs {
		vals := make([]float64, n)
		ok := make([]bool, n)
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, p := range win {
			if v, has := p.Sections[sec]; has {
				vals[i], ok[i] = float64(v), true
				lo, hi = math.Min(lo, vals[i]), math.Max(hi, vals[i])
			}
		}
		row := scale{lo: lo, hi: hi, a: y + sectionRow - 6, b: y + 4}
		c.group("sec", "data-section", sec)
		c.text(left-6, y+sectionRow/2+4, "end", "lbl", sec)
		c.line(left, y+sectionRow, width-marginRight, y+sectionRow, "grid")
		if hi > lo {
			c.text(width-marginRight, y+10, "end", "tick", Value(lo)+" to "+Value(hi))
		} else if !math.IsInf(lo, 0) {
			c.text(width-marginRight, y+10, "end", "tick", "constant "+Value(lo))
		}
		drawSteps(&c, win, vals, ok, x, row, slot, opt.MaxPoints, func(i, prev int) string {
			return fmt.Sprintf("%s: %s %s bytes (was %s, %+d)", win[i].Commit, sec, Value(vals[i]), Value(vals[prev]), int64(vals[i])-int64(vals[prev]))
		})
		c.end()
		y += sectionRow
	}
	y += 18
	if len(funcs) > 0 {
		c.text(left, y-4, "start", "tick", "offset of each function in its 64-byte line (0 at the bottom, 63 at the top)")
	}
	for _, fn := range funcs {
		vals := make([]float64, n)
		ok := make([]bool, n)
		for i, p := range win {
			if v, has := p.Offsets[fn]; has {
				vals[i], ok[i] = float64(v), true
			}
		}
		row := scale{lo: 0, hi: 63, a: y + offsetRow - 4, b: y + 4}
		c.group("fn", "data-func", fn)
		c.text(left-6, y+offsetRow/2+4, "end", "lbl", ShortLabel(fn, 12))
		c.line(left, y+offsetRow, width-marginRight, y+offsetRow, "grid")
		drawSteps(&c, win, vals, ok, x, row, slot, opt.MaxPoints, func(i, prev int) string {
			return fmt.Sprintf("%s: %s at %d mod 64 (was %d)", win[i].Commit, fn, int(vals[i]), int(vals[prev]))
		})
		c.end()
		y += offsetRow
	}
	c.close()
	return c.writeTo(w)
}

// drawSteps draws one row: a step line through the values that exist, a
// dot ("moved" when it differs from the value before) for each commit
// when there are few, and for each move otherwise.
func drawSteps(c *canvas, win []LayoutPoint, vals []float64, ok []bool, x func(int) float64, row scale, slot float64, maxPoints int,
	moved func(i, prev int) string) {
	// The path has a vertex only where the value changes, a run of
	// commits ends, or one starts after commits without a value: a long
	// history of few moves stays light.
	var xs, ys []float64
	var br []bool
	prev := -1
	for i := range vals {
		if !ok[i] {
			continue
		}
		newRun := prev < 0 || prev != i-1
		if !newRun && vals[i] != vals[prev] {
			xs, ys, br = append(xs, x(i)-slot/2), append(ys, row.at(vals[prev])), append(br, false)
			xs, ys, br = append(xs, x(i)-slot/2), append(ys, row.at(vals[i])), append(br, false)
		}
		runEnds := i+1 >= len(vals) || !ok[i+1] || vals[i+1] != vals[i]
		if newRun || runEnds {
			xs, ys, br = append(xs, x(i)), append(ys, row.at(vals[i])), append(br, newRun && prev >= 0)
		}
		prev = i
	}
	c.path(xs, ys, br, "size")
	r := math.Max(1.5, math.Min(3, slot/3))
	prev = -1
	for i := range vals {
		if !ok[i] {
			continue
		}
		isMoved := prev >= 0 && vals[i] != vals[prev]
		if isMoved || len(vals) <= maxPoints {
			class, title := "dot", ""
			if isMoved {
				class += " moved"
				title = moved(i, prev)
			} else {
				title = fmt.Sprintf("%s: %s", win[i].Commit, Value(vals[i]))
			}
			c.circle(x(i), row.at(vals[i]), r, class, title, "data-commit", win[i].Commit)
		}
		prev = i
	}
}

// pickFuncs chooses the functions drawn: those whose offset moves in the
// window, then those present in most commits; by name within each.
func pickFuncs(win []LayoutPoint, most int) []string {
	count := map[string]int{}
	moves := map[string]int{}
	last := map[string]uint64{}
	for _, p := range win {
		for fn, off := range p.Offsets {
			if old, seen := last[fn]; seen && old != off {
				moves[fn]++
			}
			last[fn] = off
			count[fn]++
		}
	}
	names := make([]string, 0, len(count))
	for fn := range count {
		names = append(names, fn)
	}
	slices.SortFunc(names, func(a, b string) int {
		switch {
		case (moves[a] > 0) != (moves[b] > 0):
			if moves[a] > 0 {
				return -1
			}
			return 1
		case count[a] != count[b]:
			return count[b] - count[a]
		}
		if a < b {
			return -1
		}
		return 1
	})
	return names[:min(most, len(names))]
}

// ShortLabel cuts a label to n characters, with an ellipsis.
func ShortLabel(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
