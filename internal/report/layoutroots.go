// Root changes in the layout report: what started the shift runs, with
// everything each moved, and where a run's shift was carried from.

package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/perfbot/perfbot/internal/layout"
)

// maxVictimNames is how many victims the text names for a root change.
const maxVictimNames = 3

// layoutRootsText prints the ranked root changes.
func layoutRootsText(b *bytes.Buffer, d *layout.DiffResult, limit int) {
	if len(d.RootChanges) == 0 {
		return
	}
	by := "ranked by symbols moved"
	if d.Ranking == layout.ByProfile {
		by = "ranked by the profile hotness of what each moved, then symbols moved"
	}
	fmt.Fprintf(b, "\nRoot changes (what started the shifts, with everything each moved; %s):\n", by)
	n := layoutCap(len(d.RootChanges), limit)
	for k := range d.RootChanges[:n] {
		rc := &d.RootChanges[k]
		fmt.Fprintf(b, "  %2d. %s\n", k+1, layoutCauses(rc.Causes))
		fmt.Fprintf(b, "      %s\n", layoutRootSummary(d, rc))
	}
	if n < len(d.RootChanges) {
		moved := 0
		for k := range d.RootChanges[n:] {
			moved += d.RootChanges[n+k].Moved
		}
		fmt.Fprintf(b, "  ... %d more root changes (%s)\n", len(d.RootChanges)-n, layoutCount(moved, "symbol moved", "symbols moved"))
	}
}

// layoutRootSummary says what a root change moved: symbols, runs (how
// many carried by realignment), where padding absorbed it, and its first
// victims.
func layoutRootSummary(d *layout.DiffResult, rc *layout.RootChange) string {
	var moved, carried int
	var absorbed []string
	for _, i := range rc.Runs {
		r := &d.Runs[i]
		switch {
		case r.Shift == 0:
			absorbed = append(absorbed, fmt.Sprintf("before %s (rounded to a multiple of %d bytes)", r.First.Name(), r.Align))
		case r.Carried:
			carried++
			moved++
		default:
			moved++
		}
	}
	s := fmt.Sprintf("moved %s in %s", layoutCount(rc.Moved, "symbol", "symbols"), layoutCount(moved, "shift run", "shift runs"))
	if carried > 0 {
		s += fmt.Sprintf(" (%d carried on by realignment)", carried)
	}
	if len(absorbed) > 0 {
		s += "; padding absorbed it " + strings.Join(absorbed, ", ")
	}
	if !rc.Traced {
		for _, i := range rc.Roots {
			if r := &d.Runs[i]; r.Break != "" {
				s += "; untraced: " + r.Break
				break
			}
		}
	}
	if len(rc.Victims) > 0 {
		var names []string
		for _, c := range rc.Victims[:min(maxVictimNames, len(rc.Victims))] {
			names = append(names, c.Name())
		}
		s += "; victims: " + strings.Join(names, ", ")
		if len(rc.Victims) > maxVictimNames {
			s += fmt.Sprintf(" (of %d ranked)", len(rc.Victims))
		}
	}
	return s
}

// layoutCarry says where a carried run's shift came from, or "" for a
// run that is not carried; in full, with the tables met on the way and
// the rounding.
func layoutCarry(d *layout.DiffResult, r *layout.Run, full bool) string {
	if !r.Carried || r.From < 0 {
		return ""
	}
	from := &d.Runs[r.From]
	s := fmt.Sprintf("carried from the %+d run from %s", from.Shift, from.First.Name())
	if !full {
		return s
	}
	if len(r.Tables) > 0 {
		s += " with " + layoutCauses(r.Tables)
	}
	if r.Align > 0 {
		s += fmt.Sprintf(", re-rounded to a multiple of %d bytes", r.Align)
	}
	if len(r.Via) > 0 {
		s += fmt.Sprintf(" (%s from the root)", layoutCount(len(r.Via)+1, "step", "steps"))
	}
	return s
}

// layoutRootRef names a run's root change, "root change 1: removed x (16
// bytes), ..." (its first cause only), or "" when it has none.
func layoutRootRef(d *layout.DiffResult, r *layout.Run) string {
	if r.RootChange < 0 {
		return ""
	}
	cs := d.RootChanges[r.RootChange].Causes
	s := fmt.Sprintf("root change %d", r.RootChange+1)
	if len(cs) > 0 {
		s += ": " + cs[0].String()
	}
	if len(cs) > 1 {
		s += ", ..."
	}
	return s
}

// layoutRunText prints one shift run: its causes and, for a carried run,
// where its shift came from and its root change.
func layoutRunText(b *bytes.Buffer, d *layout.DiffResult, r *layout.Run) {
	fmt.Fprintf(b, "  %-10s %+6d  from %s (%s, %d bytes): %s\n",
		r.Section, r.Shift, r.First.Name(), layoutCount(r.Count, "symbol", "symbols"), r.Bytes(), layoutRunCauses(r))
	if carry := layoutCarry(d, r, true); carry != "" {
		fmt.Fprintf(b, "  %18s%s; %s\n", "", carry, layoutRootRef(d, r))
	} else if len(r.Tables) > 0 && len(r.Causes) > 0 {
		fmt.Fprintf(b, "  %18swith %s\n", "", layoutCauses(r.Tables))
	} else if r.Break != "" {
		fmt.Fprintf(b, "  %18suntraced: %s\n", "", r.Break)
	}
}

// layoutRunCauses describes a run's own causes or, when the tables before
// it explain all of its shift (no padding left over), those tables.
func layoutRunCauses(r *layout.Run) string {
	if len(r.Causes) == 0 && len(r.Tables) > 0 && !r.Carried {
		return layoutCauses(r.Tables)
	}
	return layoutCauses(r.Causes)
}

// layoutRootsJSON returns the root changes for the JSON report, cut to
// limit, victims cut to top.
func layoutRootsJSON(d *layout.DiffResult, limit, top int) []layoutRootJSON {
	out := []layoutRootJSON{}
	for k := range d.RootChanges[:layoutCap(len(d.RootChanges), limit)] {
		rc := &d.RootChanges[k]
		rj := layoutRootJSON{Rank: k + 1, Text: layoutCauses(rc.Causes), Causes: layoutCausesJSON(rc.Causes),
			Roots: rc.Roots, Runs: rc.Runs, Moved: rc.Moved, Bytes: rc.Bytes, Hot: rc.Hot, Traced: rc.Traced, Victims: []string{}, VictimsTotal: len(rc.Victims)}
		for _, c := range rc.Victims[:layoutCap(len(rc.Victims), top)] {
			rj.Victims = append(rj.Victims, c.Name())
		}
		out = append(out, rj)
	}
	return out
}

func layoutCausesJSON(cs []layout.Cause) []layoutCauseJSON {
	out := []layoutCauseJSON{}
	for _, c := range cs {
		cj := layoutCauseJSON{Kind: c.Kind.String(), Bytes: c.Bytes, Count: c.Count, Text: c.String(), Table: c.Table, Estimated: c.Estimated, Until: c.Until, After: c.After}
		if c.Symbol != nil {
			cj.Symbol = c.Symbol.Name
		}
		out = append(out, cj)
	}
	return out
}
