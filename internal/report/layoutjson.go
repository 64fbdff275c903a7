// WriteLayoutJSON: a layout diff as one JSON object.

package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/report/doc"
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
	return layoutBinaryJSON{Path: b.Path, Format: string(b.Format), Arch: b.Arch, Type: string(b.Type), PIE: b.PIE,
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
//	root_changes[] the changes that started the shifts, ranked (the one
//	              holding the top-ranked change first): rank, text,
//	              causes[] (as in runs[]), root_runs (ids of the runs whose
//	              own causes they are), runs (ids of every run it explains:
//	              each root run, then the runs carried from it, including
//	              those with shift 0 where padding absorbed it), moved
//	              (symbols), victims (names of its ranked changes, in rank
//	              order, cut like changes), victims_total
//	root_changes_total all root changes (root_changes[] is cut to
//	              LayoutOptions.Roots)
//	runs[]        shift runs that moved, in the text report's order (by root
//	              change, each root run followed by the runs carried from
//	              it): id (index among all runs, what changes[].run refers
//	              to), section, shift, jump (shift minus the previous run's),
//	              first, last, count, bytes, prev (the symbol just before the
//	              run: where padding goes), causes[] (kind: added|removed|
//	              resized|reordered|section moved|realigned|table, symbol,
//	              bytes, count: 1, or the number of symbols summed into a
//	              cause with no symbol, text; table and estimated for a
//	              table cause), from (id of the run whose shift reached this
//	              one, -1: none), root (id of the run whose own causes
//	              started its shift), via (ids of the carried runs between
//	              root and this one), carried (its shift is from's
//	              re-rounded: padding only), align (the boundary it was
//	              re-rounded at), tables[] (tables without symbols between
//	              from and this run that changed size, as causes),
//	              root_change (rank in root_changes)
//	runs_total    all moved runs (runs[] is cut to LayoutOptions.Runs)
//	changes[]     ranked changes, most likely to matter first: rank, name,
//	              kind ("func", "object"), shift, a and b (name, addr, size,
//	              section, off32, off64, off4096, lines, straddles), hot
//	              (profile self fraction), weight (alignment-class grade,
//	              see layout.Weight*), score, why, run (-1: none),
//	              root_change (rank in root_changes; absent: none), source,
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
		Version: doc.LayoutVersion, A: layoutBinary(d.A), B: layoutBinary(d.B),
		Ranking: string(d.Ranking), Profile: d.Profile,
		Stats: layoutStatsJSON{st.Matched, st.Added, st.Removed, st.Moved, st.Off64Changed, st.LinesChanged,
			st.NewStraddles, st.LostStraddles, st.SharedGained, st.SharedLost},
		Runs: []layoutRunJSON{}, Changes: []layoutChangeJSON{}, Shared: []layoutSharedJSON{},
		Notes: append([]string{}, d.Notes...), RankedTotal: len(d.Ranked),
	}
	runIndex := map[*layout.Run]int{}
	for i := range d.Runs {
		runIndex[&d.Runs[i]] = i
	}
	out.RootChanges, out.RootsTotal = layoutRootsJSON(d, opt.rootLimit(), top), len(d.RootChanges)
	runs := layoutRunOrder(d)
	out.RunsTotal = len(runs)
	for _, r := range runs[:layoutCap(len(runs), maxRuns)] {
		rj := layoutRunJSON{ID: runIndex[r], Section: r.Section, Shift: r.Shift, Jump: r.Jump,
			First: r.First.Name(), Last: r.Last.Name(), Count: r.Count, Bytes: r.Bytes(), Causes: layoutCausesJSON(r.Causes),
			From: r.From, Root: r.Root, Via: r.Via, Carried: r.Carried, Align: r.Align, RootChange: r.RootChange + 1, Break: r.Break}
		if r.Prev != nil {
			rj.Prev = r.Prev.Name
		}
		if len(r.Tables) > 0 {
			rj.Tables = layoutCausesJSON(r.Tables)
		}
		out.Runs = append(out.Runs, rj)
	}
	for i, c := range d.Ranked[:layoutCap(len(d.Ranked), top)] {
		cj := layoutChangeJSON{Rank: i + 1, Name: c.Name(), Kind: c.B.Kind.String(), Shift: c.Shift(),
			A: layoutPlace(c.A), B: layoutPlace(c.B), Hot: c.Hot, Weight: c.Weight, Score: c.Score,
			Why: layoutWhy(c), Run: c.Run, Source: c.Source, LoopsNote: c.LoopsNote}
		if c.Run >= 0 {
			cj.RootChange = d.Runs[c.Run].RootChange + 1
		}
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
