package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// grid lays out text in columns the way benchstat's tables do: each column
// is as wide as its widest cell plus the widest left margin of its cells;
// a cell may span columns, widening the span's stretchable columns, and
// empty cells at the end of a line print nothing.
type grid struct {
	cells  []gridCell
	cols   int
	shrink map[int]bool // columns a span must not widen
}

type gridCell struct {
	row, col, span int
	text, margin   string
	align          byte // 'l', 'r' or 'c'
}

// put adds a cell. Its left margin is margin, or by default one space,
// none for column 0 or empty text.
func (g *grid) put(row, col, span int, text string, align byte, margin ...string) {
	m := " "
	if col == 0 || text == "" {
		m = ""
	}
	if len(margin) > 0 {
		m = margin[0]
	}
	g.cells = append(g.cells, gridCell{row, col, span, text, m, align})
	g.cols = max(g.cols, col+span)
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// write formats the grid.
func (g *grid) write(b *bytes.Buffer) {
	margin := make([]int, g.cols)
	for _, c := range g.cells {
		margin[c.col] = max(margin[c.col], runes(c.margin))
	}
	width := make([]int, g.cols)
	byspan := slices.Clone(g.cells)
	slices.SortStableFunc(byspan, func(a, b gridCell) int { return a.span - b.span })
	for _, c := range byspan {
		need := runes(c.text) + margin[c.col]
		if c.span == 1 {
			width[c.col] = max(width[c.col], need)
			continue
		}
		have := 0
		var stretch []int
		for col := c.col; col < c.col+c.span; col++ {
			have += width[col]
			if g.shrink[col] {
				need -= width[col]
			} else {
				stretch = append(stretch, col)
			}
		}
		if have >= runes(c.text)+margin[c.col] || len(stretch) == 0 {
			continue
		}
		// Share what is missing among the stretchable columns, the
		// widest first, each taking at least its share of the rest.
		slices.SortStableFunc(stretch, func(a, b int) int { return width[b] - width[a] })
		left := len(stretch)
		for _, col := range stretch {
			width[col] = max(width[col], (need+left-1)/left)
			need -= width[col]
			left--
		}
	}
	offset := make([]int, g.cols+1)
	for i, w := range width {
		offset[i+1] = offset[i] + w
	}

	byrow := slices.Clone(g.cells)
	slices.SortStableFunc(byrow, func(a, b gridCell) int {
		if a.row != b.row {
			return a.row - b.row
		}
		return a.col - b.col
	})
	row, pos := 0, 0
	for _, c := range byrow {
		if strings.TrimSpace(c.text) == "" && strings.TrimSpace(c.margin) == "" {
			continue
		}
		for ; row < c.row; row++ {
			b.WriteString("\n")
			pos = 0
		}
		fmt.Fprintf(b, "%*s%*s", max(offset[c.col]-pos, 0), "", margin[c.col], c.margin)
		inner := offset[c.col+c.span] - offset[c.col] - margin[c.col]
		var s string
		switch c.align {
		case 'r':
			s = fmt.Sprintf("%*s", inner, c.text)
		case 'c':
			s = strings.Repeat(" ", max((inner-runes(c.text))/2, 0)) + c.text
		default:
			s = c.text
		}
		b.WriteString(s)
		pos = offset[c.col] + margin[c.col] + runes(s)
	}
	if len(g.cells) > 0 {
		b.WriteString("\n")
	}
}
