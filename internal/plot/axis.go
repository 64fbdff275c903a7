package plot

import (
	"math"
	"strconv"
)

// scale maps data values lo..hi onto pixels a..b (b < a for a y axis,
// which grows upward).
type scale struct {
	lo, hi float64
	a, b   float64
}

func (s scale) at(x float64) float64 {
	if s.hi == s.lo {
		return (s.a + s.b) / 2
	}
	return s.a + (x-s.lo)/(s.hi-s.lo)*(s.b-s.a)
}

// niceRange widens lo..hi to round numbers and returns the ticks between
// them, about n of them: steps of 1, 2 or 5 times a power of ten.
func niceRange(lo, hi float64, n int) (float64, float64, []float64) {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, 1, []float64{0, 1}
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		d := math.Abs(lo) * 0.05
		if d == 0 {
			d = 1
		}
		lo, hi = lo-d, hi+d
	}
	step := niceStep((hi - lo) / float64(max(n, 1)))
	lo = roundTo(math.Floor(lo/step)*step, step)
	hi = roundTo(math.Ceil(hi/step)*step, step)
	var ticks []float64
	for i := 0; ; i++ {
		t := lo + float64(i)*step
		if t > hi+step/2 || i > 100 {
			break
		}
		// Rounded to the step's precision, so 0.30000000000000004 is 0.3.
		ticks = append(ticks, roundTo(t, step))
	}
	return lo, hi, ticks
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / p; {
	case f <= 1:
		return p
	case f <= 2:
		return 2 * p
	case f <= 5:
		return 5 * p
	}
	return 10 * p
}

func roundTo(x, step float64) float64 {
	d := decimals(step)
	m := math.Pow(10, float64(d))
	return math.Round(x*m) / m
}

// decimals is how many decimals show a step's multiples exactly.
func decimals(step float64) int {
	d := 0
	for s := step; d < 12 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, math.Abs(s)); s *= 10 {
		d++
	}
	return d
}

// tickLabel formats a tick with as many decimals as its step needs; big
// and small magnitudes take the g format.
func tickLabel(x, step float64) string {
	if x == 0 {
		return "0"
	}
	if a := math.Abs(x); a >= 1e7 || a < 1e-4 {
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	return strconv.FormatFloat(x, 'f', decimals(step), 64)
}

// Value formats a figure for a label or tooltip with four significant
// digits.
func Value(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// Percent formats a change in percent with its sign.
func Percent(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 1, 64) + "%"
}

// signedPercent is Percent with a + for growth.
func signedPercent(x float64) string {
	if x > 0 {
		return "+" + Percent(x)
	}
	return Percent(x)
}

// yGrid draws a grid line from left to right at each tick of the y scale
// ys, labelled left of the axis with the precision the ticks' step needs.
func (c *canvas) yGrid(ticks []float64, ys scale, left, right float64) {
	step := 1.0
	if len(ticks) > 1 {
		step = ticks[1] - ticks[0]
	}
	for _, t := range ticks {
		y := ys.at(t)
		c.line(left, y, right, y, "grid")
		c.text(left-6, y+4, "end", "tick", tickLabel(t, step))
	}
}
