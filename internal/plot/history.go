package plot

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/metric"
)

// HistoryOptions shape a history plot.
type HistoryOptions struct {
	// Width and Height in pixels; defaults 960 x 320.
	Width, Height int
	// From and To select the points drawn, [From, To) (To 0: to the end):
	// the zoom.
	From, To int
	// Standalone embeds the stylesheet, for an SVG file read on its own
	// (perfbot history --format svg); a page that holds several figures
	// includes Stylesheet once instead.
	Standalone bool
	// MaxPoints is the most points drawn as circles (each with its data
	// and tooltip); longer ranges draw the line and band only, and the
	// page's script finds the point under the pointer from the x axis.
	// Default 500.
	MaxPoints int
	// ChangeLink, when set, makes each change's mark a link (to its
	// finding): "" for none.
	ChangeLink func(history.Change) string
}

// Geometry shared with LayoutHistory, so that its columns line up with
// the history's points.
const (
	marginLeft  = 84
	marginRight = 16
)

// Stylesheet is the figures' CSS, for a page that holds several of them.
const Stylesheet = stylesheet

func (o HistoryOptions) size() (w, h float64) {
	w, h = float64(o.Width), float64(o.Height)
	if w <= 0 {
		w = 960
	}
	if h <= 0 {
		h = 320
	}
	return w, h
}

// Window is the range of points [From, To) the options select among n,
// clamped to what exists.
func (o HistoryOptions) Window(n int) (from, to int) {
	from, to = o.From, o.To
	if to <= 0 || to > n {
		to = n
	}
	from = max(0, min(from, to-1))
	if to <= from {
		from, to = 0, n
	}
	return from, to
}

// slots places points from..to-1 evenly across the plot area: x of point
// i is left + (i-from+0.5)*slot.
func slots(width float64, n int) (left, slot float64) {
	return marginLeft, (width - marginLeft - marginRight) / float64(max(n, 1))
}

// History draws the history of a metric: each tested commit's chained
// level (its median, chained within sessions: see package history) as a
// line with a point per commit, the interval of each step as a band
// around the level it is chained from, a break where a chain restarts,
// and a dashed line with the culprit and verdict at each change watch
// handled (s.Changes, which watch.Annotate sets). The svg element carries data-from, data-to, data-left and
// data-slot (the x of point i is left + (i-from+0.5)*slot), and each
// circle its point's index and commit.
func History(w io.Writer, s *history.Series, opt HistoryOptions) error {
	if s == nil || len(s.Points) == 0 {
		return fmt.Errorf("plot: history of %s: no tested commit", seriesName(s))
	}
	if opt.MaxPoints == 0 {
		opt.MaxPoints = 500
	}
	width, height := opt.size()
	from, to := opt.Window(len(s.Points))
	pts := s.Points[from:to]
	n := len(pts)
	left, slot := slots(width, n)
	top, bottom := 28.0, height-34

	levels := map[string]float64{}
	for _, p := range s.Points {
		levels[p.Commit.Hash] = p.Level
	}
	// The band: each step's interval, around the level it is chained from.
	lo, hi := make([]float64, n), make([]float64, n)
	has := make([]bool, n)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for i, p := range pts {
		ymin, ymax = math.Min(ymin, p.Level), math.Max(ymax, p.Level)
		ref, ok := levels[p.Ref]
		if p.NewChain || p.Ref == "" || !ok || (p.Lo == 0 && p.Hi == 0) {
			continue
		}
		lo[i], hi[i], has[i] = ref*(1+p.Lo/100), ref*(1+p.Hi/100), true
		ymin, ymax = math.Min(ymin, lo[i]), math.Max(ymax, hi[i])
	}
	y0, y1, ticks := niceRange(ymin, ymax, 5)
	ys := scale{lo: y0, hi: y1, a: bottom, b: top}
	x := func(i int) float64 { return left + (float64(i)+0.5)*slot }

	var c canvas
	label := fmt.Sprintf("history of %s%s: %d tested commits", s.Metric, unitSuffix(s.Unit), n)
	c.open(width, height, "history", label,
		"data-metric", s.Metric, "data-points", strconv.Itoa(n), "data-total", strconv.Itoa(len(s.Points)),
		"data-from", strconv.Itoa(from), "data-to", strconv.Itoa(to),
		"data-left", strconv.FormatFloat(left, 'f', 3, 64), "data-slot", strconv.FormatFloat(slot, 'f', 6, 64))
	if opt.Standalone {
		c.style()
	}
	// Axes and grid.
	c.yGrid(ticks, ys, left, width-marginRight)
	c.line(left, bottom, width-marginRight, bottom, "axis")
	c.line(left, top, left, bottom, "axis")
	c.text(left, 16, "start", "ttl", s.Metric+unitSuffix(s.Unit)+betterNote(s))
	every := max(1, int(math.Ceil(90/slot)))
	for i := 0; i < n; i += every {
		c.line(x(i), bottom, x(i), bottom+4, "axis")
		c.text(x(i), bottom+16, "middle", "tick", pts[i].Commit.Short()[:min(7, len(pts[i].Commit.Short()))])
	}

	// The band, one shape per run of points that have an interval.
	c.group("bands")
	for _, run := range bandRuns(pts, has, lo, hi, x, slot) {
		var bx, by []float64
		if len(run) == 1 {
			hw := math.Min(slot/2, 4)
			p := run[0]
			bx = []float64{p.x - hw, p.x + hw, p.x + hw, p.x - hw}
			by = []float64{ys.at(p.hi), ys.at(p.hi), ys.at(p.lo), ys.at(p.lo)}
		} else {
			for _, p := range run {
				bx, by = append(bx, p.x), append(by, ys.at(p.hi))
			}
			for k := len(run) - 1; k >= 0; k-- {
				bx, by = append(bx, run[k].x), append(by, ys.at(run[k].lo))
			}
		}
		c.polygon(bx, by, "band")
	}
	c.end()

	// The line, broken where a chain restarts.
	idx := lineIndices(pts, x, slot)
	xs, yv := make([]float64, len(idx)), make([]float64, len(idx))
	br := make([]bool, len(idx))
	for k, i := range idx {
		xs[k], yv[k], br[k] = x(i), ys.at(pts[i].Level), pts[i].NewChain
	}
	for i, p := range pts {
		if p.NewChain && i > 0 {
			xb := x(i) - slot/2
			c.line(xb, top, xb, bottom, "brk")
		}
	}
	c.path(xs, yv, br, "ln")

	// Changes: between the two tested commits whose step is the change.
	lastLabel := math.Inf(-1)
	for _, ch := range s.Changes {
		if ch.Index < from+1 || ch.Index >= to {
			continue
		}
		k := ch.Index - from
		xm := (x(k-1) + x(k)) / 2
		culprit, verdict, text := "", "none", ch.Note
		if len(ch.Culprits) > 0 {
			cu := ch.Culprits[0]
			culprit, verdict = gitrev.Short(cu.Commit), string(cu.Verdict)
			text = culprit + " " + string(cu.Verdict)
			if len(ch.Culprits) > 1 {
				text += fmt.Sprintf(" and %d more", len(ch.Culprits)-1)
			}
		}
		if verdict == "" {
			verdict = "none"
		}
		link := ""
		if opt.ChangeLink != nil {
			link = opt.ChangeLink(ch)
		}
		if link != "" {
			c.b.WriteString(`<a href="`)
			c.b.WriteString(htmlEscape(link))
			c.b.WriteString(`">`)
		}
		c.group("change mark-"+verdict, "data-index", strconv.Itoa(ch.Index), "data-culprit", culprit, "data-verdict", verdict)
		c.line(xm, top, xm, bottom, "mark mark-"+verdict)
		c.polygonMarker(xm, top, "mark-"+verdict)
		if xm-lastLabel > 110 {
			c.text(xm+5, top+10, "start", "mlbl mark-"+verdict, text)
			lastLabel = xm
		}
		c.b.WriteString("<title>")
		c.b.WriteString(htmlEscape(fmt.Sprintf("change %s: %s", signedPercent(ch.Step), text)))
		c.b.WriteString("</title>")
		c.end()
		if link != "" {
			c.b.WriteString("</a>")
		}
	}

	// The points, with their data, when there are few enough to draw.
	if n <= opt.MaxPoints {
		c.group("points")
		r := math.Max(1.5, math.Min(4, slot/3))
		for i, p := range pts {
			c.circle(x(i), ys.at(p.Level), r, "pt", pointTitle(s, p),
				"data-i", strconv.Itoa(from+i), "data-commit", p.Commit.Hash)
		}
		c.end()
	}
	c.close()
	return c.writeTo(w)
}

// bandPt is the band at one x: a point's interval, or the widest of the
// points drawn in one pixel column.
type bandPt struct{ x, lo, hi float64 }

// bandRuns splits the band into runs of points with an interval, broken
// where a chain restarts. With more than two points to a pixel, each
// pixel column is one bandPt spanning its points' intervals: the same
// picture, with a vertex per pixel rather than per commit.
func bandRuns(pts []history.Point, has []bool, lo, hi []float64, x func(int) float64, slot float64) [][]bandPt {
	var runs [][]bandPt
	var cur []bandPt
	flush := func() {
		if len(cur) > 0 {
			runs = append(runs, cur)
		}
		cur = nil
	}
	reduce := slot < 0.5
	col := math.Inf(-1)
	for i, p := range pts {
		if p.NewChain || !has[i] {
			flush()
			if !has[i] {
				continue
			}
		}
		if reduce && len(cur) > 0 && math.Floor(x(i)) == col {
			b := &cur[len(cur)-1]
			b.lo, b.hi = math.Min(b.lo, lo[i]), math.Max(b.hi, hi[i])
			continue
		}
		col = math.Floor(x(i))
		cur = append(cur, bandPt{x: x(i), lo: lo[i], hi: hi[i]})
	}
	flush()
	return runs
}

// lineIndices are the points the line goes through: every one when there
// are at most two to a pixel; else, in each pixel column, the first, the
// lowest, the highest and the last (M4 aggregation: the same picture with
// at most four vertices per pixel), and each point that starts a new
// chain.
func lineIndices(pts []history.Point, x func(int) float64, slot float64) []int {
	if slot >= 0.5 {
		out := make([]int, len(pts))
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	first, lowest, highest := -1, -1, -1
	col := math.Inf(-1)
	emit := func(last int) {
		if first < 0 {
			return
		}
		ks := []int{first, lowest, highest, last}
		slices.Sort(ks)
		for _, k := range slices.Compact(ks) {
			out = append(out, k)
		}
	}
	for i, p := range pts {
		if c := math.Floor(x(i)); c != col || p.NewChain {
			emit(i - 1)
			first, lowest, highest, col = i, i, i, c
			continue
		}
		if p.Level < pts[lowest].Level {
			lowest = i
		}
		if p.Level > pts[highest].Level {
			highest = i
		}
	}
	emit(len(pts) - 1)
	return out
}

// polygonMarker is the small triangle at the top of a mark.
func (c *canvas) polygonMarker(x, y float64, class string) {
	c.polygon([]float64{x - 4, x + 4, x}, []float64{y - 7, y - 7, y}, class)
}

// pointTitle is a point's tooltip: commit, subject, level, median, step.
func pointTitle(s *history.Series, p history.Point) string {
	t := fmt.Sprintf("%s %s\nlevel %s, median %s [%s, %s]%s, %d runs", p.Commit.Short(), p.Commit.Subject, Value(p.Level), Value(p.Median),
		Value(p.MedianLo), Value(p.MedianHi), unitSuffix(s.Unit), p.Runs)
	switch {
	case p.NewChain:
		t += "\nnew chain (its reference left the history)"
	case p.Ref != "":
		t += fmt.Sprintf("\nstep %s [%s, %s] vs %s, p=%s", signedPercent(p.Step), signedPercent(p.Lo), signedPercent(p.Hi), gitrev.Short(p.Ref), Value(p.P))
	}
	return t
}

func unitSuffix(u string) string {
	if u == "" {
		return ""
	}
	return " (" + u + ")"
}

func betterNote(s *history.Series) string {
	switch s.Better {
	case metric.HigherIsBetter:
		return ", higher is better"
	case metric.LowerIsBetter:
		return ", lower is better"
	}
	return ""
}

func seriesName(s *history.Series) string {
	if s == nil {
		return "nothing"
	}
	return s.Metric
}

func htmlEscape(s string) string {
	var c canvas
	c.attr("x", s)
	v := c.b.String()
	return v[4 : len(v)-1]
}
