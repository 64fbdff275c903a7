package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/perfbot/perfbot/internal/layout"
)

// LayoutOptions selects what the layout writers print. Zero values pick
// the defaults; a negative count means all.
type LayoutOptions struct {
	// Top is how many ranked changes to print (default 10).
	Top int
	// Runs is how many shift runs to print (default 8); runs with no
	// shift are never printed.
	Runs int
	// Pairs is how many false-sharing candidate pairs to print (default 6).
	Pairs int
	// Symbol, when set, is printed first in full detail.
	Symbol string
	// Padding, when set, is described at the end of the text report and
	// included in the JSON.
	Padding *layout.Padding
}

func (o LayoutOptions) layoutLimits() (top, runs, pairs int) {
	top, runs, pairs = o.Top, o.Runs, o.Pairs
	if top == 0 {
		top = 10
	}
	if runs == 0 {
		runs = 8
	}
	if pairs == 0 {
		pairs = 6
	}
	return top, runs, pairs
}

// layoutCap returns n cut to limit (negative limit: no cut).
func layoutCap(n, limit int) int {
	if limit >= 0 && n > limit {
		return limit
	}
	return n
}

// WriteLayoutText writes a concise human report of a layout diff: the two
// builds, counts, the shift runs with their causes, the ranked changes
// (with loop positions for analysed functions), the false-sharing
// candidates, notes, and the padding proposal if any.
func WriteLayoutText(w io.Writer, d *layout.DiffResult, opt LayoutOptions) error {
	top, maxRuns, maxPairs := opt.layoutLimits()
	var b bytes.Buffer
	st := d.Stats
	fmt.Fprintf(&b, "layout diff\n  A: %s (%s)\n  B: %s (%s)\n", layoutPath(d.A), d.A.Describe(), layoutPath(d.B), d.B.Describe())
	fmt.Fprintf(&b, "  %d matched, %d added, %d removed; %d moved, %d changed offset mod 64, %d touch a different number of lines",
		st.Matched, st.Added, st.Removed, st.Moved, st.Off64Changed, st.LinesChanged)
	if st.NewStraddles > 0 {
		fmt.Fprintf(&b, ", %d newly straddle a line", st.NewStraddles)
	}
	b.WriteString("\n")
	if d.Ranking == "profile" {
		fmt.Fprintf(&b, "  ranked by hotness (%s profile) times alignment-class change\n", d.Profile)
	} else {
		b.WriteString("  ranked by alignment-class change (no profile given)\n")
	}

	if opt.Symbol != "" {
		layoutFocus(&b, d, opt.Symbol)
	}

	runs := layoutRunOrder(d, top)
	if len(runs) > 0 {
		b.WriteString("\nWhere the shifts start (shift runs and their causes; those moving the top changes first):\n")
		n := layoutCap(len(runs), maxRuns)
		for _, r := range runs[:n] {
			fmt.Fprintf(&b, "  %-10s %+6d  from %s (%s, %d bytes): %s\n",
				r.Section, r.Shift, r.First.Name(), layoutCount(r.Count, "symbol", "symbols"), r.Bytes(), layoutCauses(r.Causes))
		}
		if n < len(runs) {
			fmt.Fprintf(&b, "  ... %d more shift runs%s\n", len(runs)-n, layoutRunSummary(runs[n:]))
		}
	}

	if len(d.Ranked) > 0 {
		b.WriteString("\nMost likely to matter:\n")
		n := layoutCap(len(d.Ranked), top)
		for i, c := range d.Ranked[:n] {
			layoutChangeText(&b, d, i+1, c)
		}
		if n < len(d.Ranked) {
			fmt.Fprintf(&b, "  ... %d more changed symbols\n", len(d.Ranked)-n)
		}
	} else {
		b.WriteString("\nNo symbol changed its place inside a 64-byte line or a page.\n")
	}

	if len(d.Shared) > 0 {
		pairs := layoutPairOrder(d.Shared)
		fmt.Fprintf(&b, "\nFalse-sharing candidates (writable objects sharing a 64-byte line in one build only): %d gained, %d lost\n",
			st.SharedGained, st.SharedLost)
		n := layoutCap(len(pairs), maxPairs)
		for _, p := range pairs[:n] {
			if p.Gained {
				fmt.Fprintf(&b, "  gained: %s and %s now share line %#x\n", p.X.Name(), p.Y.Name(), p.Line)
			} else {
				fmt.Fprintf(&b, "  lost:   %s and %s no longer share a line (shared %#x)\n", p.X.Name(), p.Y.Name(), p.Line)
			}
		}
		if n < len(pairs) {
			fmt.Fprintf(&b, "  ... %d more pairs\n", len(pairs)-n)
		}
	}

	if p := opt.Padding; p != nil {
		fmt.Fprintf(&b, "\nPadding to restore %s:\n", p.Symbol)
		for _, line := range strings.Split(strings.TrimSpace(p.Instructions()), "\n") {
			b.WriteString("  " + line + "\n")
		}
	}

	if len(d.Notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range d.Notes {
			b.WriteString("  " + n + "\n")
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// layoutRunSummary counts what started the runs not printed.
func layoutRunSummary(runs []*layout.Run) string {
	var symbols, padding, order, section int
	for _, r := range runs {
		kinds := map[layout.CauseKind]bool{}
		for _, c := range r.Causes {
			kinds[c.Kind] = true
		}
		switch {
		case kinds[layout.Added] || kinds[layout.Removed] || kinds[layout.Resized]:
			symbols++
		case kinds[layout.Reordered]:
			order++
		case kinds[layout.SectionMoved]:
			section++
		default:
			padding++
		}
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{symbols, "added, removed or resized symbols"}, {padding, "alignment padding only"}, {order, "reordering"}, {section, "a moved section start"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d from %s", p.n, p.what))
		}
	}
	return ": " + strings.Join(parts, ", ")
}

func layoutPath(b *layout.Binary) string {
	if b.Path == "" {
		return "(input)"
	}
	return b.Path
}

func layoutCount(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// layoutCauses prints up to three causes, then how many more and their
// net bytes.
func layoutCauses(cs []layout.Cause) string {
	if len(cs) == 0 {
		return "no cause found"
	}
	const show = 3
	var parts []string
	for i, c := range cs {
		if i == show {
			var net int64
			for _, r := range cs[show:] {
				net += r.Bytes
			}
			parts = append(parts, fmt.Sprintf("and %d more (%+d bytes)", len(cs)-show, net))
			break
		}
		parts = append(parts, c.String())
	}
	return strings.Join(parts, ", ")
}

// layoutRunOrder returns the runs that moved, those holding the top-ranked
// changes first (in rank order), then the others largest first.
func layoutRunOrder(d *layout.DiffResult, top int) []*layout.Run {
	var out []*layout.Run
	seen := map[int]bool{}
	for i, c := range d.Ranked {
		if top >= 0 && i >= top {
			break
		}
		if c.Run >= 0 && !seen[c.Run] && d.Runs[c.Run].Shift != 0 {
			seen[c.Run] = true
			out = append(out, &d.Runs[c.Run])
		}
	}
	var rest []*layout.Run
	for i := range d.Runs {
		if !seen[i] && d.Runs[i].Shift != 0 {
			rest = append(rest, &d.Runs[i])
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].Count > rest[j].Count })
	return append(out, rest...)
}

// layoutPairOrder puts gained pairs of small objects (counters, locks)
// first.
func layoutPairOrder(ps []layout.SharedLine) []layout.SharedLine {
	out := append([]layout.SharedLine(nil), ps...)
	small := func(p layout.SharedLine) bool { return p.X.B.Size <= 64 && p.Y.B.Size <= 64 }
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Gained != out[j].Gained {
			return out[i].Gained
		}
		return small(out[i]) && !small(out[j])
	})
	return out
}

// layoutWhy says in a few words why a change ranks where it does.
func layoutWhy(c *layout.Change) string {
	var why []string
	for i := range c.Loops {
		l := &c.Loops[i]
		if l.A != nil && l.B != nil && l.Changed() && l.Inner() {
			if l.A.Crosses != l.B.Crosses {
				why = append(why, "inner loop now "+layoutCrossWord(l.B.Crosses)+" a line")
			} else {
				why = append(why, "inner loop moved in its line")
			}
			break
		}
	}
	switch {
	case c.B.Straddles() && !c.A.Straddles():
		why = append(why, "now straddles a line")
	case c.A.Straddles() && !c.B.Straddles():
		why = append(why, "no longer straddles a line")
	case c.LinesChanged():
		why = append(why, "touches a different number of lines")
	case c.A.Off(32) != c.B.Off(32):
		why = append(why, "offset mod 32 changed")
	case c.Off64Changed():
		why = append(why, "offset mod 64 changed")
	case c.A.Off(4096) != c.B.Off(4096):
		why = append(why, "same line offset, page offset changed")
	case c.Weight == 0 && c.Hot > 0:
		why = append(why, "hot, placement unchanged")
	}
	return strings.Join(why, "; ")
}

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
			fmt.Fprintf(b, " (shift run from %s: %s)", d.Runs[c.Run].First.Name(), layoutCauses(d.Runs[c.Run].Causes))
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

// layoutFocus prints the requested symbol first, in full.
func layoutFocus(b *bytes.Buffer, d *layout.DiffResult, name string) {
	fmt.Fprintf(b, "\nSymbol %s:\n", name)
	for i := range d.Changes {
		c := &d.Changes[i]
		if c.A.Name == name || c.B.Name == name {
			rank := 0
			for j, r := range d.Ranked {
				if r == c {
					rank = j + 1
				}
			}
			layoutChangeText(b, d, rank, c)
			return
		}
	}
	for _, s := range d.Added {
		if s.Name == name {
			fmt.Fprintf(b, "  only in B (added): %#x, %d bytes, %s, offset mod 64 %d\n", s.Addr, s.Size, s.Section.Name, s.Off(64))
			return
		}
	}
	for _, s := range d.Removed {
		if s.Name == name {
			fmt.Fprintf(b, "  only in A (removed): %#x, %d bytes, %s, offset mod 64 %d\n", s.Addr, s.Size, s.Section.Name, s.Off(64))
			return
		}
	}
	b.WriteString("  not found in either build\n")
}

// JSON form of a layout diff.
type (
	layoutJSON struct {
		Version     int                `json:"version"`
		A           layoutBinaryJSON   `json:"a"`
		B           layoutBinaryJSON   `json:"b"`
		Ranking     string             `json:"ranking"`
		Profile     string             `json:"profile,omitempty"`
		Stats       layoutStatsJSON    `json:"stats"`
		Runs        []layoutRunJSON    `json:"runs"`
		RunsTotal   int                `json:"runs_total"`
		Changes     []layoutChangeJSON `json:"changes"`
		RankedTotal int                `json:"ranked_total"`
		Shared      []layoutSharedJSON `json:"shared_lines"`
		Added       []layoutSymJSON    `json:"added"`
		Removed     []layoutSymJSON    `json:"removed"`
		Padding     *layoutPaddingJSON `json:"padding,omitempty"`
		Notes       []string           `json:"notes"`
	}
	layoutBinaryJSON struct {
		Path     string `json:"path"`
		Format   string `json:"format"`
		Arch     string `json:"arch"`
		Type     string `json:"type"`
		PIE      bool   `json:"pie"`
		Static   bool   `json:"static"`
		Go       bool   `json:"go"`
		Symbols  int    `json:"symbols"`
		Describe string `json:"describe"`
	}
	layoutStatsJSON struct {
		Matched       int `json:"matched"`
		Added         int `json:"added"`
		Removed       int `json:"removed"`
		Moved         int `json:"moved"`
		Off64Changed  int `json:"off64_changed"`
		LinesChanged  int `json:"lines_changed"`
		NewStraddles  int `json:"new_straddles"`
		LostStraddles int `json:"lost_straddles"`
		SharedGained  int `json:"shared_gained"`
		SharedLost    int `json:"shared_lost"`
	}
	layoutPlaceJSON struct {
		Name      string `json:"name"`
		Addr      string `json:"addr"`
		Size      uint64 `json:"size"`
		Section   string `json:"section"`
		Off32     uint64 `json:"off32"`
		Off64     uint64 `json:"off64"`
		Off4096   uint64 `json:"off4096"`
		Lines     int    `json:"lines"`
		Straddles bool   `json:"straddles"`
	}
	layoutChangeJSON struct {
		Rank      int              `json:"rank"`
		Name      string           `json:"name"`
		Kind      string           `json:"kind"`
		Shift     int64            `json:"shift"`
		A         layoutPlaceJSON  `json:"a"`
		B         layoutPlaceJSON  `json:"b"`
		Hot       float64          `json:"hot"`
		Weight    float64          `json:"weight"`
		Score     float64          `json:"score"`
		Why       string           `json:"why"`
		Run       int              `json:"run"`
		Source    string           `json:"source,omitempty"`
		Loops     []layoutLoopJSON `json:"loops,omitempty"`
		LoopsNote string           `json:"loops_note,omitempty"`
	}
	layoutLoopJSON struct {
		Index   int                `json:"index"`
		Inner   bool               `json:"inner"`
		Changed bool               `json:"changed"`
		A       *layoutLoopPosJSON `json:"a"`
		B       *layoutLoopPosJSON `json:"b"`
	}
	layoutLoopPosJSON struct {
		Start   string `json:"start"`
		End     string `json:"end"`
		FuncOff uint64 `json:"func_off"`
		LineOff uint64 `json:"line_off"`
		Len     int    `json:"len"`
		Depth   int    `json:"depth"`
		Crosses bool   `json:"crosses"`
		Lines   int    `json:"lines"`
		Source  string `json:"source,omitempty"`
	}
	layoutRunJSON struct {
		ID      int               `json:"id"`
		Section string            `json:"section"`
		Shift   int64             `json:"shift"`
		Jump    int64             `json:"jump"`
		First   string            `json:"first"`
		Last    string            `json:"last"`
		Count   int               `json:"count"`
		Bytes   uint64            `json:"bytes"`
		Prev    string            `json:"prev,omitempty"`
		Causes  []layoutCauseJSON `json:"causes"`
	}
	layoutCauseJSON struct {
		Kind   string `json:"kind"`
		Symbol string `json:"symbol,omitempty"`
		Bytes  int64  `json:"bytes"`
		Count  int    `json:"count"`
		Text   string `json:"text"`
	}
	layoutSharedJSON struct {
		X      string `json:"x"`
		Y      string `json:"y"`
		Gained bool   `json:"gained"`
		Line   string `json:"line"`
	}
	layoutSymJSON struct {
		Name    string `json:"name"`
		Kind    string `json:"kind"`
		Section string `json:"section"`
		Addr    string `json:"addr"`
		Size    uint64 `json:"size"`
		Off64   uint64 `json:"off64"`
	}
	layoutPaddingJSON struct {
		Symbol       string `json:"symbol"`
		Section      string `json:"section"`
		Bytes        uint64 `json:"bytes"`
		OffA         uint64 `json:"off_a"`
		OffB         uint64 `json:"off_b"`
		Before       string `json:"before,omitempty"`
		After        string `json:"after,omitempty"`
		Restores     int    `json:"restores"`
		Instructions string `json:"instructions"`
		Asm          string `json:"asm"`
	}
)

func layoutHex(x uint64) string { return fmt.Sprintf("%#x", x) }

func layoutPlace(s *layout.Symbol) layoutPlaceJSON {
	return layoutPlaceJSON{
		Name: s.Name, Addr: layoutHex(s.Addr), Size: s.Size, Section: s.Section.Name,
		Off32: s.Off(32), Off64: s.Off(64), Off4096: s.Off(4096), Lines: s.Lines(), Straddles: s.Straddles(),
	}
}

func layoutLoopPos(l *layout.LoopPos) *layoutLoopPosJSON {
	if l == nil {
		return nil
	}
	return &layoutLoopPosJSON{
		Start: layoutHex(l.Start), End: layoutHex(l.End), FuncOff: l.FuncOff, LineOff: l.LineOff,
		Len: l.Len, Depth: l.Depth, Crosses: l.Crosses, Lines: l.Lines, Source: l.Source,
	}
}

func layoutSyms(ss []*layout.Symbol, limit int) []layoutSymJSON {
	out := []layoutSymJSON{}
	for i, s := range ss {
		if limit >= 0 && i >= limit {
			break
		}
		out = append(out, layoutSymJSON{Name: s.Name, Kind: s.Kind.String(), Section: s.Section.Name,
			Addr: layoutHex(s.Addr), Size: s.Size, Off64: s.Off(64)})
	}
	return out
}

func layoutBinary(b *layout.Binary) layoutBinaryJSON {
	return layoutBinaryJSON{Path: b.Path, Format: b.Format, Arch: b.Arch, Type: b.Type, PIE: b.PIE,
		Static: b.Static, Go: b.Go, Symbols: len(b.Symbols), Describe: b.Describe()}
}

// WriteLayoutJSON writes a layout diff as one JSON object (version 1).
// Addresses are hexadecimal strings ("0x401040"), since kernel addresses do
// not fit a JSON number exactly; sizes, offsets and shifts are numbers.
//
//	version       1
//	a, b          the builds: path, format ("elf", "system.map"), arch,
//	              type, pie, static, go, symbols (count), describe
//	ranking       "profile" or "alignment"; profile: the profile's format
//	stats         matched, added, removed, moved, off64_changed,
//	              lines_changed, new_straddles, lost_straddles,
//	              shared_gained, shared_lost
//	runs[]        shift runs that moved, in the text report's order (those
//	              holding top changes first, then largest): id (index among
//	              all runs, what changes[].run refers to), section, shift,
//	              jump (shift minus the previous run's), first, last, count,
//	              bytes, prev (the symbol just before the run: where padding
//	              goes), causes[] (kind: added|removed|resized|reordered|
//	              section moved|realigned, symbol, bytes, count: 1, or
//	              the number of symbols summed into a cause with no symbol,
//	              text)
//	runs_total    all moved runs (runs[] is cut to LayoutOptions.Runs)
//	changes[]     ranked changes, most likely to matter first: rank, name,
//	              kind ("func", "object"), shift, a and b (name, addr, size,
//	              section, off32, off64, off4096, lines, straddles), hot
//	              (profile self fraction), weight (alignment-class grade,
//	              see layout.Weight*), score, why, run (-1: none), source,
//	              loops[] (index, inner, changed, a and b: start, end,
//	              func_off, line_off, len, depth, crosses, lines, source;
//	              null when the loop is in one build only), loops_note
//	ranked_total  all ranked changes (changes[] is cut to LayoutOptions.Top)
//	shared_lines[] false-sharing candidates: x, y, gained (true: share a
//	              line in b only), line (the shared line's address)
//	added[], removed[]
//	              symbols in one build only (cut like changes): name, kind,
//	              section, addr, size, off64
//	padding       when asked: symbol, section, bytes, off_a, off_b, before,
//	              after, restores (symbols moved back with it),
//	              instructions, asm (the GNU assembler file)
//	notes[]       what the diff could not do or assumed
func WriteLayoutJSON(w io.Writer, d *layout.DiffResult, opt LayoutOptions) error {
	top, maxRuns, maxPairs := opt.layoutLimits()
	st := d.Stats
	out := layoutJSON{
		Version: 1, A: layoutBinary(d.A), B: layoutBinary(d.B),
		Ranking: d.Ranking, Profile: d.Profile,
		Stats: layoutStatsJSON{st.Matched, st.Added, st.Removed, st.Moved, st.Off64Changed, st.LinesChanged,
			st.NewStraddles, st.LostStraddles, st.SharedGained, st.SharedLost},
		Runs: []layoutRunJSON{}, Changes: []layoutChangeJSON{}, Shared: []layoutSharedJSON{},
		Notes: append([]string{}, d.Notes...), RankedTotal: len(d.Ranked),
	}
	runIndex := map[*layout.Run]int{}
	for i := range d.Runs {
		runIndex[&d.Runs[i]] = i
	}
	runs := layoutRunOrder(d, top)
	out.RunsTotal = len(runs)
	for _, r := range runs[:layoutCap(len(runs), maxRuns)] {
		rj := layoutRunJSON{ID: runIndex[r], Section: r.Section, Shift: r.Shift, Jump: r.Jump,
			First: r.First.Name(), Last: r.Last.Name(), Count: r.Count, Bytes: r.Bytes(), Causes: []layoutCauseJSON{}}
		if r.Prev != nil {
			rj.Prev = r.Prev.Name
		}
		for _, c := range r.Causes {
			cj := layoutCauseJSON{Kind: c.Kind.String(), Bytes: c.Bytes, Count: c.Count, Text: c.String()}
			if c.Symbol != nil {
				cj.Symbol = c.Symbol.Name
			}
			rj.Causes = append(rj.Causes, cj)
		}
		out.Runs = append(out.Runs, rj)
	}
	for i, c := range d.Ranked[:layoutCap(len(d.Ranked), top)] {
		cj := layoutChangeJSON{Rank: i + 1, Name: c.Name(), Kind: c.B.Kind.String(), Shift: c.Shift(),
			A: layoutPlace(c.A), B: layoutPlace(c.B), Hot: c.Hot, Weight: c.Weight, Score: c.Score,
			Why: layoutWhy(c), Run: c.Run, Source: c.Source, LoopsNote: c.LoopsNote}
		for j := range c.Loops {
			l := &c.Loops[j]
			cj.Loops = append(cj.Loops, layoutLoopJSON{Index: l.Index, Inner: l.Inner(), Changed: l.Changed(),
				A: layoutLoopPos(l.A), B: layoutLoopPos(l.B)})
		}
		out.Changes = append(out.Changes, cj)
	}
	pairs := layoutPairOrder(d.Shared)
	for _, p := range pairs[:layoutCap(len(pairs), maxPairs)] {
		out.Shared = append(out.Shared, layoutSharedJSON{X: p.X.Name(), Y: p.Y.Name(), Gained: p.Gained, Line: layoutHex(p.Line)})
	}
	out.Added = layoutSyms(d.Added, top)
	out.Removed = layoutSyms(d.Removed, top)
	if p := opt.Padding; p != nil {
		pj := &layoutPaddingJSON{Symbol: p.Symbol, Section: p.Section, Bytes: p.Bytes, OffA: p.OffA, OffB: p.OffB,
			Instructions: p.Instructions(), Asm: p.Asm(), Restores: 1}
		if p.Before != nil {
			pj.Before = p.Before.Name
		}
		if p.After != nil {
			pj.After = p.After.Name
		}
		if p.Run != nil {
			pj.Restores = p.Run.Count
		}
		out.Padding = pj
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
