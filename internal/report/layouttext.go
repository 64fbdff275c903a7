// WriteLayoutText: the human report of a layout diff.

package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/perfbot/perfbot/internal/layout"
)

// WriteLayoutText writes a concise human report of a layout diff: the two
// builds, counts, the root changes with what each moved, the shift runs
// with their causes (and, for a run that only re-rounds an earlier
// shift, where it was carried from), the ranked changes
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
	if d.Ranking == layout.ByProfile {
		fmt.Fprintf(&b, "  ranked by hotness (%s profile) times alignment-class change\n", d.Profile)
	} else {
		b.WriteString("  ranked by alignment-class change (no profile given)\n")
	}

	if opt.Symbol != "" {
		layoutFocus(&b, d, opt.Symbol)
	}

	layoutRootsText(&b, d, opt.rootLimit())
	runs := layoutRunOrder(d)
	if len(runs) > 0 {
		b.WriteString("\nWhere the shifts start (shift runs and their causes, by root change):\n")
		n := layoutCap(len(runs), maxRuns)
		for _, r := range runs[:n] {
			layoutRunText(&b, d, r)
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
