// Package plot draws perfbot's figures as SVG on the server: a metric's
// history (plot.History), the runs of builds side by side (Distribution),
// a history of code and data layout (LayoutHistory) and symbols in their
// 64-byte cache lines (CacheLines).
//
// The figures need no script and no font files to be read: they are plain
// SVG 1.1 with the browser's sans-serif font, sized by a viewBox so they
// scale with the page. Every drawn point carries its data (data-*
// attributes and a <title>), which the dashboard's script uses for hover,
// zoom and selection, and which tests read back. docs/dashboard.md says
// why this package draws the figures itself rather than through
// gonum.org/v1/plot or a JavaScript chart library.
package plot

import (
	"bytes"
	"html"
	"io"
	"math"
	"strconv"
)

// canvas accumulates one SVG document.
type canvas struct {
	b bytes.Buffer
}

// num writes x with at most one decimal: a tenth of a pixel is finer than
// any screen, and shorter numbers keep big plots light.
func (c *canvas) num(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		x = 0
	}
	r := math.Round(x*10) / 10
	if r == math.Trunc(r) {
		c.b.WriteString(strconv.FormatInt(int64(r), 10))
		return
	}
	c.b.WriteString(strconv.FormatFloat(r, 'f', 1, 64))
}

// attr writes name="value" with the value escaped.
func (c *canvas) attr(name, value string) {
	c.b.WriteByte(' ')
	c.b.WriteString(name)
	c.b.WriteString(`="`)
	c.b.WriteString(html.EscapeString(value))
	c.b.WriteByte('"')
}

// nattr writes name="x".
func (c *canvas) nattr(name string, x float64) {
	c.b.WriteByte(' ')
	c.b.WriteString(name)
	c.b.WriteString(`="`)
	c.num(x)
	c.b.WriteByte('"')
}

// open starts the document: width x height user units, scaled by the
// page; class names the figure for the stylesheet and for tests.
func (c *canvas) open(w, h float64, class, label string, data ...string) {
	c.b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 `)
	c.num(w)
	c.b.WriteByte(' ')
	c.num(h)
	c.b.WriteString(`"`)
	c.nattr("width", w)
	c.nattr("height", h)
	c.attr("class", "plot "+class)
	c.attr("role", "img")
	c.attr("aria-label", label)
	for i := 0; i+1 < len(data); i += 2 {
		c.attr(data[i], data[i+1])
	}
	c.b.WriteString(` font-family="sans-serif" font-size="11">`)
	c.b.WriteString("<title>")
	c.b.WriteString(html.EscapeString(label))
	c.b.WriteString("</title>")
}

func (c *canvas) close() { c.b.WriteString("</svg>\n") }

// line draws a segment.
func (c *canvas) line(x1, y1, x2, y2 float64, class string) {
	c.b.WriteString("<line")
	c.nattr("x1", x1)
	c.nattr("y1", y1)
	c.nattr("x2", x2)
	c.nattr("y2", y2)
	c.attr("class", class)
	c.b.WriteString("/>")
}

// rect draws a rectangle; title, when not empty, is its tooltip.
func (c *canvas) rect(x, y, w, h float64, class, title string, data ...string) {
	c.b.WriteString("<rect")
	c.nattr("x", x)
	c.nattr("y", y)
	c.nattr("width", math.Max(w, 0))
	c.nattr("height", math.Max(h, 0))
	c.attr("class", class)
	for i := 0; i+1 < len(data); i += 2 {
		c.attr(data[i], data[i+1])
	}
	c.titled(title, "rect")
}

// circle draws a point with its data attributes and tooltip.
func (c *canvas) circle(x, y, r float64, class, title string, data ...string) {
	c.b.WriteString("<circle")
	c.nattr("cx", x)
	c.nattr("cy", y)
	c.nattr("r", r)
	c.attr("class", class)
	for i := 0; i+1 < len(data); i += 2 {
		c.attr(data[i], data[i+1])
	}
	c.titled(title, "circle")
}

// titled ends an element, with a <title> child when title is not empty.
func (c *canvas) titled(title, elem string) {
	if title == "" {
		c.b.WriteString("/>")
		return
	}
	c.b.WriteString("><title>")
	c.b.WriteString(html.EscapeString(title))
	c.b.WriteString("</title></")
	c.b.WriteString(elem)
	c.b.WriteString(">")
}

// text writes a label; anchor is start, middle or end.
func (c *canvas) text(x, y float64, anchor, class, s string) {
	c.b.WriteString("<text")
	c.nattr("x", x)
	c.nattr("y", y)
	if anchor != "" && anchor != "start" {
		c.attr("text-anchor", anchor)
	}
	if class != "" {
		c.attr("class", class)
	}
	c.b.WriteByte('>')
	c.b.WriteString(html.EscapeString(s))
	c.b.WriteString("</text>")
}

// path draws the polyline through xs, ys, broken where br[i] is true (no
// segment into point i); class styles it.
func (c *canvas) path(xs, ys []float64, br []bool, class string) {
	if len(xs) == 0 {
		return
	}
	c.b.WriteString(`<path d="`)
	for i := range xs {
		if i == 0 || (br != nil && br[i]) {
			c.b.WriteByte('M')
		} else {
			c.b.WriteByte('L')
		}
		c.num(xs[i])
		c.b.WriteByte(' ')
		c.num(ys[i])
	}
	c.b.WriteString(`"`)
	c.attr("class", class)
	c.b.WriteString("/>")
}

// polygon fills the closed shape through xs, ys.
func (c *canvas) polygon(xs, ys []float64, class string) {
	if len(xs) < 3 {
		return
	}
	c.b.WriteString(`<path d="`)
	for i := range xs {
		if i == 0 {
			c.b.WriteByte('M')
		} else {
			c.b.WriteByte('L')
		}
		c.num(xs[i])
		c.b.WriteByte(' ')
		c.num(ys[i])
	}
	c.b.WriteString(`Z"`)
	c.attr("class", class)
	c.b.WriteString("/>")
}

// group opens a <g> with a class and data attributes; end closes it.
func (c *canvas) group(class string, data ...string) {
	c.b.WriteString("<g")
	if class != "" {
		c.attr("class", class)
	}
	for i := 0; i+1 < len(data); i += 2 {
		c.attr(data[i], data[i+1])
	}
	c.b.WriteByte('>')
}

func (c *canvas) end() { c.b.WriteString("</g>") }

// style embeds the figure's stylesheet, so that an SVG file saved from the
// command line looks like the one in the page.
func (c *canvas) style() {
	c.b.WriteString("<style>")
	c.b.WriteString(stylesheet)
	c.b.WriteString("</style>")
}

func (c *canvas) writeTo(w io.Writer) error {
	_, err := w.Write(c.b.Bytes())
	return err
}

// stylesheet is shared by every figure. Colours: the verdicts' colours of
// the dashboard (red regression, green improvement, amber alignment, grey
// no change, purple inconclusive).
const stylesheet = `.axis{stroke:#888;stroke-width:1}.grid{stroke:#e4e4e4;stroke-width:1}` +
	`.tick{fill:#555}.lbl{fill:#333}.ttl{fill:#111;font-weight:bold}` +
	`.ln{fill:none;stroke:#1f5fa8;stroke-width:1.5}.band{fill:#1f5fa8;fill-opacity:.15;stroke:none}` +
	`.pt{fill:#1f5fa8;stroke:#fff;stroke-width:1}.pt.sel{fill:#e07b00;stroke:#000}` +
	`.mark{stroke-width:1.5;stroke-dasharray:4 3}.mark-real-regression{stroke:#c62828;fill:#c62828}` +
	`.mark-real-improvement{stroke:#2e7d32;fill:#2e7d32}.mark-text-alignment,.mark-data-alignment{stroke:#c77700;fill:#c77700}` +
	`.mark-no-change{stroke:#777;fill:#777}.mark-inconclusive,.mark-none{stroke:#6a3d9a;fill:#6a3d9a}.mlbl{stroke:none}` +
	`.brk{stroke:#999;stroke-dasharray:2 2}.box{fill:#dbe7f5;stroke:#1f5fa8}.med{stroke:#0d3466;stroke-width:2}` +
	`.run{fill:#1f5fa8;fill-opacity:.6}.run.changed{fill:#c62828}.box.changed{fill:#f6dada;stroke:#c62828}` +
	`.dot{fill:#1f5fa8}.dot.moved{fill:#e07b00;stroke:#000;stroke-width:.5}.size{fill:none;stroke:#555;stroke-width:1.2}` +
	`.cl{fill:#fafafa;stroke:#bbb}.sym{fill:#c9d8ea;stroke:#6b8db5}.sym.hot{fill:#f2b36b;stroke:#b86d00}` +
	`.loop{fill:#b86d00;fill-opacity:.45}.cross{fill:#c62828}`
