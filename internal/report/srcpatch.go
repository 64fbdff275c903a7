// Source patches (layout.SrcPatch): the patch with its explanation, and
// the check of a patched build, as text and JSON.

package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/report/doc"
)

// SrcPatchSummary returns the explanation of a source patch, a few lines
// without indentation: the root change, the spot and why there, the
// definition's size and alignment, and the notes.
func SrcPatchSummary(sp *layout.SrcPatch) string {
	var b strings.Builder
	fmt.Fprintf(&b, "root change: %s\n", sp.Root)
	switch {
	case sp.Anchor == "":
		fmt.Fprintf(&b, "spot: %s:%d, at the end of the file (%s); found from %s\n", sp.File, sp.Line, sp.Order, sp.From)
	case sp.After:
		fmt.Fprintf(&b, "spot: %s:%d, after the definition of %s (line %d): the file's %s is laid out in %s; found from %s\n",
			sp.File, sp.Line, sp.Anchor, sp.AnchorLine, sp.Section, sp.Order, sp.From)
	default:
		fmt.Fprintf(&b, "spot: %s:%d, before the definition of %s (line %d): the file's %s is laid out in %s; found from %s\n",
			sp.File, sp.Line, sp.Anchor, sp.AnchorLine, sp.Section, sp.Order, sp.From)
	}
	align := "the build's own alignment"
	if sp.Align > 0 {
		align = fmt.Sprintf("aligned to %d", sp.Align)
	}
	if sp.Exact {
		fmt.Fprintf(&b, "padding: %s, %d bytes in %s, %s: every address after it comes back\n", sp.Name, sp.Bytes, sp.Section, align)
	} else {
		fmt.Fprintf(&b, "padding: %s, %d bytes in %s, %s: every offset mod 64 after it comes back, not the addresses\n", sp.Name, sp.Bytes, sp.Section, align)
	}
	for _, n := range sp.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

// WriteSrcPatchText writes the patch for git apply, preceded by its
// explanation as "# " lines (git apply skips text before the diff).
func WriteSrcPatchText(w io.Writer, sp *layout.SrcPatch) error {
	var b strings.Builder
	b.WriteString("# perfbot layout source patch: restores the old build's layout in the new build's source\n")
	for _, l := range strings.Split(strings.TrimSuffix(SrcPatchSummary(sp), "\n"), "\n") {
		b.WriteString("# " + l + "\n")
	}
	fmt.Fprintf(&b, "# apply with: git -C %s apply FILE; rebuild, then check with --patch-check NEW_BUILD\n\n", sp.SrcDir)
	b.WriteString(sp.Diff)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteSrcPatchCheck writes the check of a patched build in a few lines.
func WriteSrcPatchCheck(w io.Writer, sp *layout.SrcPatch, r layout.CheckResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "source patch check (%s at %s:%d)\n", sp.Name, sp.File, sp.Line)
	fmt.Fprintf(&b, "  %s\n", r)
	switch {
	case r.Pad == "":
		fmt.Fprintf(&b, "  the patched build has no symbol %s: was the patch applied and the build redone?\n", sp.Name)
	case sp.Exact && sp.Root.Kind == layout.Removed:
		if r.PadBack {
			fmt.Fprintf(&b, "  %s is at %#x, where %s was\n", r.Pad, r.PadAt, sp.Root.Symbol)
		} else {
			fmt.Fprintf(&b, "  %s is at %#x, not where %s was\n", r.Pad, r.PadAt, sp.Root.Symbol)
		}
	}
	for _, m := range r.NotBack {
		fmt.Fprintf(&b, "  not back: %s at %#x, %#x in the base build (%+d)\n", m.Name, m.Patched, m.Base, int64(m.Patched-m.Base))
	}
	if n := r.After - r.Back - len(r.NotBack); n > 0 {
		fmt.Fprintf(&b, "  ... %d more not back\n", n)
	}
	if r.Missing > 0 {
		fmt.Fprintf(&b, "  %d symbols after the spot in the base build are not in the patched build\n", r.Missing)
	}
	if r.OtherMoved > 0 {
		fmt.Fprintf(&b, "  elsewhere: %d symbols not at their base address (%s): changes this patch does not undo\n",
			r.OtherMoved, strings.Join(r.OtherSections, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteSrcPatchJSON writes the patch (and, when r is not nil, its check)
// as one JSON object: a doc.SrcPatch (docs/schema/layout-patch.json).
func WriteSrcPatchJSON(w io.Writer, sp *layout.SrcPatch, r *layout.CheckResult) error {
	out := doc.SrcPatch{Version: doc.SrcPatchVersion,
		Root: sp.Root.String(), RootKind: sp.Root.Kind.String(), RootSymbol: sp.Root.Symbol, Suspect: sp.Suspect,
		File: sp.File, Line: sp.Line, Anchor: sp.Anchor, AnchorLine: sp.AnchorLine, After: sp.After,
		Order: sp.Order, From: sp.From, Name: sp.Name, Section: sp.Section, Bytes: sp.Bytes, Align: sp.Align,
		Exact: sp.Exact, Diff: sp.Diff, Notes: append([]string{}, sp.Notes...),
	}
	if r != nil {
		c := &doc.SrcPatchCheck{Restored: r.Restored, Summary: r.String(), After: r.After, Back: r.Back,
			NotBack: []string{}, Missing: r.Missing, BeforeMoved: r.BeforeMoved, PadBack: r.PadBack,
			SuspectBack: r.SuspectBack, OtherMoved: r.OtherMoved, OtherSections: append([]string{}, r.OtherSections...)}
		if r.Pad != "" {
			c.PadAt = layoutHex(r.PadAt)
		}
		for _, m := range r.NotBack {
			c.NotBack = append(c.NotBack, fmt.Sprintf("%s %#x -> %#x", m.Name, m.Base, m.Patched))
		}
		out.Check = c
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
