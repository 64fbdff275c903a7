package plot

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/perfbot/perfbot/internal/stats"
)

// Group is one build's runs in a distribution plot.
type Group struct {
	Label  string // "base", "changed", "changed+padding", ...
	Sub    string // a second line: the short commit, the variant
	Values []float64
	// Changed draws the group in the changed commit's colour.
	Changed bool
}

// DistOptions shape a distribution plot.
type DistOptions struct {
	// Width and Height in pixels; defaults 120 per group (at least 240)
	// x 260.
	Width, Height int
	Title, Unit   string
	// Lo and Hi fix the value axis (both 0: from the values), so that
	// plots side by side share it.
	Lo, Hi     float64
	Standalone bool
}

// Distribution draws each group's runs side by side: every run as a dot
// (spread sideways so that equal values stay visible), the box spanning
// the median's 95 % interval (stats.Summarize, as benchstat prints it)
// with the median as a bar, and a whisker from the smallest to the largest
// run. Each dot carries its value (data-v) and tooltip.
func Distribution(w io.Writer, groups []Group, opt DistOptions) error {
	if len(groups) == 0 {
		return fmt.Errorf("plot: distribution %q: no group", opt.Title)
	}
	width, height := float64(opt.Width), float64(opt.Height)
	if width <= 0 {
		width = math.Max(240, 120*float64(len(groups))+60)
	}
	if height <= 0 {
		height = 260
	}
	lo, hi := opt.Lo, opt.Hi
	if lo == 0 && hi == 0 {
		lo, hi = ValueRange(groups)
	}
	y0, y1, ticks := niceRange(lo, hi, 5)
	left, right, top, bottom := 60.0, width-10, 26.0, height-38
	ys := scale{lo: y0, hi: y1, a: bottom, b: top}
	slot := (right - left) / float64(len(groups))

	// Values that are not numbers (a missing pair) are not runs.
	groups = slices.Clone(groups)
	runs := 0
	for i, g := range groups {
		var vs []float64
		for _, v := range g.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				vs = append(vs, v)
			}
		}
		groups[i].Values = vs
		runs += len(vs)
	}
	var c canvas
	c.open(width, height, "dist", fmt.Sprintf("%s: runs of %d builds", opt.Title, len(groups)),
		"data-groups", strconv.Itoa(len(groups)), "data-runs", strconv.Itoa(runs))
	if opt.Standalone {
		c.style()
	}
	c.yGrid(ticks, ys, left, right)
	c.line(left, top, left, bottom, "axis")
	c.line(left, bottom, right, bottom, "axis")
	c.text(left, 15, "start", "ttl", opt.Title+unitSuffix(opt.Unit))
	for gi, g := range groups {
		cx := left + (float64(gi)+0.5)*slot
		changed := ""
		if g.Changed {
			changed = " changed"
		}
		c.group("grp", "data-label", g.Label, "data-n", strconv.Itoa(len(g.Values)))
		c.text(cx, bottom+15, "middle", "lbl", g.Label)
		if g.Sub != "" {
			c.text(cx, bottom+28, "middle", "tick", g.Sub)
		}
		if len(g.Values) == 0 {
			c.text(cx, (top+bottom)/2, "middle", "tick", "no runs")
			c.end()
			continue
		}
		s := stats.Summarize(g.Values)
		bw := math.Min(slot*0.5, 60)
		c.line(cx, ys.at(s.Min), cx, ys.at(s.Max), "axis")
		c.rect(cx-bw/2, ys.at(s.Hi), bw, ys.at(s.Lo)-ys.at(s.Hi), "box"+changed,
			fmt.Sprintf("%s: median %s, 95%% interval [%s, %s], %d runs", g.Label, Value(s.Median), Value(s.Lo), Value(s.Hi), s.N))
		c.line(cx-bw/2, ys.at(s.Median), cx+bw/2, ys.at(s.Median), "med")
		for i, v := range g.Values {
			// A low-discrepancy spread (golden ratio), the same on every
			// render: dots do not dance between reloads.
			dx := (math.Mod(float64(i)*0.618034, 1) - 0.5) * bw * 0.9
			c.circle(cx+dx, ys.at(v), 2.5, "run"+changed, fmt.Sprintf("%s run: %s", g.Label, Value(v)), "data-v", strconv.FormatFloat(v, 'g', -1, 64))
		}
		c.end()
	}
	c.close()
	return c.writeTo(w)
}

// ValueRange is the smallest and largest value of the groups, for plots
// that share an axis.
func ValueRange(groups []Group) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, g := range groups {
		for _, v := range g.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 1
	}
	return lo, hi
}
