// The text report of a triage.

package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/triage"
)

// writeTriageText is the text report.
func writeTriageText(w io.Writer, r *triage.Result) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "triage of %s on %s\n", r.Metric, r.Job)
	fmt.Fprintf(&b, "  base:    %s\n  changed: %s\n", triageCommitLine(r.Base), triageCommitLine(r.Changed))
	fmt.Fprintf(&b, "\nverdict: %s\n%s\n", r.Verdict, r.Sentence)
	if d := triageDecidedBy(r); d != "" {
		fmt.Fprintf(&b, "decided by: %s\n", d)
	}
	if r.Disagreement != "" {
		fmt.Fprintf(&b, "plain vs layout-robust: %s\n", r.Disagreement)
	}
	if ev := r.Instructions; ev != nil {
		fmt.Fprintf(&b, "instructions: %s\n", ev.Text)
	}
	for _, e := range r.Experiments {
		fmt.Fprintf(&b, "\n%s: %s\n", triageHeading(e), e.Title)
		fmt.Fprintf(&b, "  %s: %s\n", e.Outcome, e.Reason)
		if e.Name == triage.SweepExperiment {
			triageLayoutsText(&b, e)
		}
		if e.Table != nil {
			b.WriteString("\n")
			if err := WriteNCompare(&b, e.Table, Options{All: true}); err != nil {
				return err
			}
		}
	}
	triageSuspectsText(&b, r)
	triageSourcePatchText(&b, r)
	if len(r.Notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	fmt.Fprintf(&b, "\nbudget: %s\n", triageBudget(r))
	_, err := w.Write(b.Bytes())
	return err
}

// triageLayoutsText prints the sweep's per-layout medians and the layout
// sensitivity.
func triageLayoutsText(b *bytes.Buffer, e triage.Experiment) {
	tab := &triageTab{}
	tab.row("  layout", "base", "changed", "change", "runs")
	for _, l := range e.Layouts {
		tab.row("  "+l.Variant, triageValue(l.Base), triageValue(l.Changed), pct(l.Change), fmt.Sprint(l.N))
	}
	tab.write(b)
}

func triageSuspectsText(b *bytes.Buffer, r *triage.Result) {
	if len(r.Suspects) == 0 && r.Padding == "" {
		return
	}
	b.WriteString("\nlayout suspects (perfbot layout diff, most likely first):\n")
	for i, s := range r.Suspects {
		fmt.Fprintf(b, "  %d. %s (%s in %s): offset %d -> %d mod 64; %s\n", i+1, s.Name, s.Kind, s.Section, s.OffBase, s.OffChanged, s.Why)
	}
	switch {
	case r.Padding != "" && r.SourcePatch != nil && r.SourcePatch.Restored:
		fmt.Fprintf(b, "restore padding (not measured: the source patch below was): %s\n", triageFirstLine(r.Padding))
	case r.Padding != "":
		fmt.Fprintf(b, "restore padding: %s\n", triageFirstLine(r.Padding))
	}
}

// triageSourcePatchText prints the source patch, when triage made one: the
// root change and spot, the layout check, and the patch itself for git
// apply in a checkout of the changed commit.
func triageSourcePatchText(b *bytes.Buffer, r *triage.Result) {
	sp := r.SourcePatch
	if sp == nil {
		return
	}
	fmt.Fprintf(b, "\nsource patch (%s; git apply in a checkout of %s):\n", triageSourcePatchUse(sp), gitrev.Short(r.Changed.Hash))
	fmt.Fprintf(b, "  root change: %s; %d bytes at %s:%d\n", sp.Root, sp.Bytes, sp.File, sp.Line)
	if sp.Check != "" {
		fmt.Fprintf(b, "  layout check: %s\n", sp.Check)
	}
	if sp.Identical {
		b.WriteString("  the patched build loads the base build's code and data byte for byte: the commit changes nothing else in the build\n")
	}
	for _, n := range sp.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
	b.WriteString(sp.Diff)
}

// triageSourcePatchUse says what triage did with the source patch.
func triageSourcePatchUse(sp *triage.SourcePatch) string {
	if sp.Restored {
		return "the restore experiment's third column"
	}
	return "not measured: the patched build does not have the base's layout back"
}

func triageFirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// triageTab lays out left-aligned text columns separated by two spaces.
type triageTab struct{ rows [][]string }

func (t *triageTab) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *triageTab) write(b *bytes.Buffer) {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range t.rows {
		var line strings.Builder
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			if i == len(r)-1 {
				line.WriteString(c)
			} else {
				line.WriteString(c + strings.Repeat(" ", widths[i]-len([]rune(c))))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
