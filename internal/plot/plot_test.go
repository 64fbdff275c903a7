package plot

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/metric"
)

// elem is a parsed SVG element: its name, attributes and text.
type elem struct {
	name  string
	attrs map[string]string
	text  string
}

// parse reads an SVG document back (it must be well-formed XML) and returns
// its elements in document order.
func parse(t *testing.T, doc []byte) []elem {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var out []elem
	var stack []int
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed SVG: %v\n%s", err, doc)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			e := elem{name: tk.Name.Local, attrs: map[string]string{}}
			for _, a := range tk.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			stack = append(stack, len(out)-1)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				out[stack[len(stack)-1]].text += string(tk)
			}
		}
	}
	return out
}

func having(es []elem, name, class string) []elem {
	var out []elem
	for _, e := range es {
		if e.name == name && (class == "" || strings.Contains(" "+e.attrs["class"]+" ", " "+class+" ")) {
			out = append(out, e)
		}
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return x
}

// series is a history with a +50 % step at point 3, a new chain at point 5.
func series() *history.Series {
	s := &history.Series{Job: "j", Metric: "work_ms", Unit: "ms", Better: metric.LowerIsBetter}
	levels := []float64{1, 1.01, 0.99, 1.5, 1.49, 2.0, 2.02}
	for i, l := range levels {
		p := history.Point{Commit: gitrev.Commit{Hash: fmt.Sprintf("%040d", i+1), Subject: fmt.Sprintf("commit <%d>", i)}, Index: i, Level: l, Median: l}
		if i > 0 && i != 5 {
			p.Ref = fmt.Sprintf("%040d", i)
			p.Step = 100 * (l/levels[i-1] - 1)
			p.Lo, p.Hi, p.P = p.Step-2, p.Step+2, 0.01
		}
		p.NewChain = i == 5
		s.Points = append(s.Points, p)
	}
	return s
}

func TestHistoryCarriesItsPoints(t *testing.T) {
	var b bytes.Buffer
	s := series()
	s.Changes = []history.Change{{Index: 3, Step: 50, Culprits: []history.Culprit{{Commit: "000000000000aaaa", Verdict: "real-regression"}}}}
	err := History(&b, s, HistoryOptions{Standalone: true, ChangeLink: func(c history.Change) string { return "/finding/" + c.Culprits[0].Commit[:10] + "?a=1&b=2" }})
	if err != nil {
		t.Fatal(err)
	}
	es := parse(t, b.Bytes())
	pts := having(es, "circle", "pt")
	if len(pts) != len(s.Points) {
		t.Fatalf("%d points drawn, want %d", len(pts), len(s.Points))
	}
	// Higher levels are drawn higher (smaller y), left to right in order.
	for i := 1; i < len(pts); i++ {
		xa, xb := num(t, pts[i-1].attrs["cx"]), num(t, pts[i].attrs["cx"])
		ya, yb := num(t, pts[i-1].attrs["cy"]), num(t, pts[i].attrs["cy"])
		if xb <= xa {
			t.Errorf("point %d at x %v, not right of %v", i, xb, xa)
		}
		if (s.Points[i].Level > s.Points[i-1].Level) != (yb < ya) {
			t.Errorf("point %d: level %v vs %v drawn at y %v vs %v", i, s.Points[i].Level, s.Points[i-1].Level, yb, ya)
		}
		if pts[i].attrs["data-commit"] != s.Points[i].Commit.Hash || pts[i].attrs["data-i"] != strconv.Itoa(i) {
			t.Errorf("point %d carries %v", i, pts[i].attrs)
		}
	}
	// The x of point i is data-left + (i+0.5)*data-slot, which the page's
	// script relies on.
	root := es[0]
	left, slot := num(t, root.attrs["data-left"]), num(t, root.attrs["data-slot"])
	for i, p := range pts {
		if x := num(t, p.attrs["cx"]); x < left+(float64(i)+0.5)*slot-0.1 || x > left+(float64(i)+0.5)*slot+0.1 {
			t.Errorf("point %d at %v, the script expects %v", i, x, left+(float64(i)+0.5)*slot)
		}
	}
	if !strings.Contains(b.String(), "commit &lt;2&gt;") {
		t.Error("subjects are not escaped in the tooltips")
	}
	// One mark, linked, between points 2 and 3; a break before point 5.
	if ms := having(es, "g", "change"); len(ms) != 1 || ms[0].attrs["data-culprit"] != "000000000000" || ms[0].attrs["data-verdict"] != "real-regression" {
		t.Errorf("marks %v", ms)
	}
	if as := having(es, "a", ""); len(as) != 1 || as[0].attrs["href"] != "/finding/0000000000?a=1&b=2" {
		t.Errorf("mark links %v", as)
	}
	if brs := having(es, "line", "brk"); len(brs) != 1 {
		t.Errorf("%d chain breaks drawn, want 1", len(brs))
	}
	// The band: two shapes (points 1-4, then 6; 0 and 5 have no step).
	if bands := having(es, "path", "band"); len(bands) != 2 {
		t.Errorf("%d band shapes, want 2", len(bands))
	}
	if len(having(es, "style", "")) != 1 {
		t.Error("a standalone plot has no stylesheet")
	}
}

func TestHistoryZoomAndBigHistories(t *testing.T) {
	s := series()
	var b bytes.Buffer
	s.Changes = []history.Change{{Index: 3, Note: "no confirmed culprit"}}
	if err := History(&b, s, HistoryOptions{From: 2, To: 5}); err != nil {
		t.Fatal(err)
	}
	es := parse(t, b.Bytes())
	pts := having(es, "circle", "pt")
	if len(pts) != 3 || pts[0].attrs["data-i"] != "2" || es[0].attrs["data-from"] != "2" || es[0].attrs["data-to"] != "5" {
		t.Fatalf("zoom 2..5 drew %d points from %v", len(pts), es[0].attrs)
	}
	if len(having(es, "style", "")) != 0 {
		t.Error("a plot for a page repeats the stylesheet")
	}
	if ms := having(es, "g", "change"); len(ms) != 1 || ms[0].attrs["data-verdict"] != "none" || !strings.Contains(b.String(), "no confirmed culprit") {
		t.Errorf("a change without a culprit is drawn as %v", ms)
	}
	// Many points: the line and band only, the data on the svg element.
	big := &history.Series{Metric: "m"}
	for i := range 3000 {
		big.Points = append(big.Points, history.Point{Commit: gitrev.Commit{Hash: fmt.Sprintf("%040x", i)}, Level: float64(i % 7)})
	}
	b.Reset()
	if err := History(&b, big, HistoryOptions{}); err != nil {
		t.Fatal(err)
	}
	es = parse(t, b.Bytes())
	if n := len(having(es, "circle", "pt")); n != 0 || es[0].attrs["data-points"] != "3000" {
		t.Errorf("3000 points: %d circles, data-points %s", n, es[0].attrs["data-points"])
	}
	if b.Len() > 60_000 {
		t.Errorf("3000 points weigh %d bytes", b.Len())
	}
	// Reduced to a few vertices per pixel, the line keeps its extremes: a
	// one-commit spike still shows.
	big.Points[1500].Level = 100
	for i := 1; i < len(big.Points); i++ {
		big.Points[i].Ref, big.Points[i].Lo, big.Points[i].Hi = big.Points[i-1].Commit.Hash, -1, 1
	}
	b.Reset()
	if err := History(&b, big, HistoryOptions{}); err != nil {
		t.Fatal(err)
	}
	es = parse(t, b.Bytes())
	line := having(es, "path", "ln")[0].attrs["d"]
	vertices := strings.Count(line, "L") + strings.Count(line, "M")
	if vertices > 4*960 || vertices < 800 {
		t.Errorf("3000 points drawn with %d vertices", vertices)
	}
	top := 1e9
	for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == 'M' || r == 'L' }) {
		var x, y float64
		fmt.Sscan(f, &x, &y)
		top = min(top, y)
	}
	if top > 200 { // levels 0 to 6 sit near the bottom, at y 250 and more
		t.Errorf("the spike to 100 is lost: the line's highest vertex is at y %v", top)
	}
	if n := len(having(es, "path", "band")); n != 1 {
		t.Errorf("the band of 2999 steps drawn in %d shapes", n)
	}
	if err := History(&b, &history.Series{Metric: "m"}, HistoryOptions{}); err == nil {
		t.Error("an empty history drew a plot")
	}
}

func TestDistribution(t *testing.T) {
	var b bytes.Buffer
	groups := []Group{
		{Label: "base", Sub: "abc1234", Values: []float64{1, 1.1, 0.9, 1.05, 1}},
		{Label: "changed", Values: []float64{2, 2.1, 1.9, 2.05, 2}, Changed: true},
		{Label: "empty"},
	}
	if err := Distribution(&b, groups, DistOptions{Title: "work_ms", Unit: "ms"}); err != nil {
		t.Fatal(err)
	}
	es := parse(t, b.Bytes())
	runs := having(es, "circle", "run")
	if len(runs) != 10 || es[0].attrs["data-runs"] != "10" {
		t.Fatalf("%d runs drawn", len(runs))
	}
	// The changed runs (about 2) are drawn above the base's (about 1).
	for _, r := range runs {
		v, y := num(t, r.attrs["data-v"]), num(t, r.attrs["cy"])
		for _, o := range runs {
			if num(t, o.attrs["data-v"]) > v+0.5 && num(t, o.attrs["cy"]) >= y {
				t.Errorf("value %s drawn at y %v, not above %v at %v", o.attrs["data-v"], o.attrs["cy"], v, y)
			}
		}
	}
	if len(having(es, "circle", "changed")) != 5 || len(having(es, "rect", "box")) != 2 {
		t.Error("the changed group or the boxes are missing")
	}
	if !strings.Contains(b.String(), "no runs") {
		t.Error("an empty group is not said to be empty")
	}
}

func TestLayoutHistory(t *testing.T) {
	pts := []LayoutPoint{
		{Commit: "a", Sections: map[string]uint64{".text": 1000, ".bss": 64}, Offsets: map[string]uint64{"main": 16, "kernel": 0}},
		{Commit: "b", Sections: map[string]uint64{".text": 1000, ".bss": 64}, Offsets: map[string]uint64{"main": 16, "kernel": 0}},
		{Commit: "c", Sections: map[string]uint64{".text": 1006, ".bss": 64}, Offsets: map[string]uint64{"main": 16, "kernel": 6}},
		{Commit: "d"}, // no summary
	}
	var b bytes.Buffer
	if err := LayoutHistory(&b, pts, LayoutOptions{}); err != nil {
		t.Fatal(err)
	}
	es := parse(t, b.Bytes())
	secs := having(es, "g", "sec")
	if len(secs) != 2 || secs[0].attrs["data-section"] != ".text" || secs[1].attrs["data-section"] != ".bss" {
		t.Fatalf("sections %v", secs)
	}
	fns := having(es, "g", "fn")
	if len(fns) != 2 || fns[0].attrs["data-func"] != "kernel" {
		t.Fatalf("functions %v: want the one that moved (kernel) first", fns)
	}
	moved := having(es, "circle", "moved")
	if len(moved) != 2 || moved[0].attrs["data-commit"] != "c" {
		t.Errorf("moves %v: want .text and kernel at c", moved)
	}
	if !strings.Contains(b.String(), "kernel at 6 mod 64 (was 0)") {
		t.Error("the move's tooltip does not say what moved")
	}
}

func TestCacheLines(t *testing.T) {
	before := CacheSide{Label: "before", Syms: []Sym{{Name: "helper", Addr: 0x1000, Size: 16}, {Name: "kernel", Addr: 0x1010, Size: 40, Hot: true,
		Loops: []Span{{Start: 0x1020, End: 0x1030}}}}}
	after := CacheSide{Label: "after", Syms: []Sym{{Name: "helper", Addr: 0x1000, Size: 32}, {Name: "kernel", Addr: 0x1020, Size: 40, Hot: true,
		Loops: []Span{{Start: 0x1030, End: 0x1048, Crosses: true}}}}}
	var b bytes.Buffer
	if err := CacheLines(&b, before, after, CacheOptions{Title: "kernel in .text"}); err != nil {
		t.Fatal(err)
	}
	es := parse(t, b.Bytes())
	hot := having(es, "rect", "hot")
	if len(hot) != 2 || hot[0].attrs["data-off"] != "16" || hot[1].attrs["data-off"] != "32" {
		t.Fatalf("the suspect drawn %v", hot)
	}
	if len(having(es, "rect", "cross")) != 1 {
		t.Error("the loop that crosses a line is not marked")
	}
	if len(having(es, "rect", "cl")) < 4 {
		t.Error("too few lines drawn")
	}
	if err := CacheLines(&b, CacheSide{}, CacheSide{}, CacheOptions{}); err == nil {
		t.Error("no hot symbol, and still a figure")
	}
}

func TestNiceRange(t *testing.T) {
	for _, tc := range []struct {
		lo, hi         float64
		wantLo, wantHi float64
	}{{0.93, 1.87, 0.8, 2}, {5, 5, 4.7, 5.3}, {0, 0, -1, 1}, {1200, 56000, 0, 60000}} {
		lo, hi, ticks := niceRange(tc.lo, tc.hi, 5)
		if lo != tc.wantLo || hi != tc.wantHi || ticks[0] != lo || ticks[len(ticks)-1] != hi {
			t.Errorf("niceRange(%v, %v) = %v, %v, %v", tc.lo, tc.hi, lo, hi, ticks)
		}
	}
	if got := tickLabel(0.30000000000000004, 0.1); got != "0.3" {
		t.Errorf("tick label %q", got)
	}
}
