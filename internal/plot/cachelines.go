package plot

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// Sym is a symbol drawn in its cache lines.
type Sym struct {
	Name       string
	Addr, Size uint64
	// Hot marks the suspect the figure is about.
	Hot bool
	// Loops are the hot symbol's loops, [Start, End) addresses; Crosses
	// when a loop spans a line boundary.
	Loops []Span
}

// Span is an address range.
type Span struct {
	Start, End uint64
	Crosses    bool
}

// CacheSide is one build's symbols around the suspect, sorted by address.
type CacheSide struct {
	Label string // "before: abc1234"
	Syms  []Sym
}

// CacheOptions shape a cache-line figure.
type CacheOptions struct {
	Width int    // default 960
	Line  uint64 // the line size, default 64
	// MaxLines is the most lines drawn per build (default 6): the lines
	// the hot symbol touches, one before and one after; a longer symbol
	// is cut at its end.
	MaxLines   int
	Title      string
	Standalone bool
}

// CacheLines draws the lines around a suspect symbol in two builds, one
// above the other: each 64-byte line as a box with its address, each
// symbol as a bar in it (the suspect highlighted, its loops under it), so
// that what crossed which line, and what moved into the suspect's lines,
// shows at a glance.
func CacheLines(w io.Writer, before, after CacheSide, opt CacheOptions) error {
	if opt.Line == 0 {
		opt.Line = 64
	}
	if opt.MaxLines == 0 {
		opt.MaxLines = 6
	}
	width := float64(opt.Width)
	if width <= 0 {
		width = 960
	}
	wb, ok1 := window(before, opt)
	wa, ok2 := window(after, opt)
	if !ok1 && !ok2 {
		return fmt.Errorf("plot: cache lines %q: no hot symbol in either build", opt.Title)
	}
	lines := max(wb.lines, wa.lines)
	const rowH, top = 74.0, 22.0
	height := top + 2*rowH + 6
	var c canvas
	c.open(width, height, "cachelines", opt.Title, "data-line", strconv.FormatUint(opt.Line, 10))
	if opt.Standalone {
		c.style()
	}
	c.text(8, 14, "start", "ttl", opt.Title)
	for r, side := range []struct {
		s  CacheSide
		wd win
		ok bool
	}{{before, wb, ok1}, {after, wa, ok2}} {
		y := top + float64(r)*rowH
		c.group("side", "data-side", []string{"before", "after"}[r])
		c.text(8, y+12, "start", "lbl", side.s.Label)
		if !side.ok {
			c.text(8, y+34, "start", "tick", "the symbol is not in this build")
			c.end()
			continue
		}
		drawLines(&c, side.s, side.wd, lines, opt.Line, 110, width-10, y+18)
		c.end()
	}
	c.close()
	return c.writeTo(w)
}

// win is the address window drawn for one build.
type win struct {
	start uint64 // the first line's address
	lines int
}

func window(s CacheSide, opt CacheOptions) (win, bool) {
	for _, sym := range s.Syms {
		if !sym.Hot {
			continue
		}
		first := sym.Addr / opt.Line * opt.Line
		if first >= opt.Line {
			first -= opt.Line
		}
		end := sym.Addr + max(sym.Size, 1)
		last := (end + opt.Line - 1) / opt.Line * opt.Line // past the hot symbol's last line
		n := int((last-first)/opt.Line) + 1
		return win{start: first, lines: min(n, opt.MaxLines)}, true
	}
	return win{}, false
}

// drawLines draws one build's row: line boxes from x0 to x1 at y.
func drawLines(c *canvas, s CacheSide, wd win, lines int, line uint64, x0, x1, y float64) {
	perLine := (x1 - x0) / float64(lines)
	bx := func(addr uint64) float64 {
		off := float64(int64(addr-wd.start)) / float64(line)
		return x0 + math.Max(0, math.Min(off, float64(wd.lines)))*perLine
	}
	end := wd.start + uint64(wd.lines)*line
	for k := 0; k < wd.lines; k++ {
		a := wd.start + uint64(k)*line
		c.rect(x0+float64(k)*perLine, y, perLine, 44, "cl", fmt.Sprintf("line %#x..%#x", a, a+line-1), "data-addr", fmt.Sprintf("%#x", a))
		c.text(x0+float64(k)*perLine+2, y+54, "start", "tick", fmt.Sprintf("%#x", a))
	}
	lane := 0
	for _, sym := range s.Syms {
		se := sym.Addr + sym.Size
		if se <= wd.start || sym.Addr >= end {
			continue
		}
		xa, xe := bx(sym.Addr), bx(max(se, sym.Addr+1))
		class := "sym"
		if sym.Hot {
			class += " hot"
		}
		// Neighbours alternate between two lanes, so their borders show.
		ly := y + 4 + float64(lane%2)*14
		lane++
		if sym.Hot {
			ly = y + 4
		}
		off := sym.Addr % line
		c.rect(xa, ly, math.Max(xe-xa, 1.5), 12, class,
			fmt.Sprintf("%s: %#x, %d bytes, offset %d mod %d, %d lines", sym.Name, sym.Addr, sym.Size, off, line, linesOf(sym.Addr, sym.Size, line)),
			"data-sym", sym.Name, "data-off", strconv.FormatUint(off, 10))
		if xe-xa > 40 || sym.Hot {
			c.text(xa+2, ly+10, "start", "lbl", ShortLabel(sym.Name, max(3, int((xe-xa)/6.5))))
		}
		for _, l := range sym.Loops {
			class := "loop"
			if l.Crosses {
				class += " cross"
			}
			c.rect(bx(l.Start), y+32, math.Max(bx(l.End)-bx(l.Start), 1.5), 8, class,
				fmt.Sprintf("loop %#x..%#x, offset %d in its line%s", l.Start, l.End, l.Start%line, map[bool]string{true: ", crosses a line", false: ""}[l.Crosses]))
		}
	}
}

// linesOf is how many lines [addr, addr+size) touches.
func linesOf(addr, size, line uint64) int {
	if size == 0 {
		return 1
	}
	return int((addr+size-1)/line-addr/line) + 1
}
