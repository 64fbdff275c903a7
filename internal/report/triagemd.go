// The Markdown report of a triage, for a pull-request comment.

package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/triage"
)

// writeTriageMarkdown is the Markdown report.
func writeTriageMarkdown(w io.Writer, r *triage.Result, opt TriageOptions) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### perfbot triage: `%s` of %s\n\n", r.Verdict, code(gitrev.Short(r.Changed.Hash)))
	fmt.Fprintf(&b, "**%s**\n\n", triageMDEscape(r.Sentence))
	if d := triageDecidedBy(r); d != "" {
		fmt.Fprintf(&b, "Decided by: %s.\n\n", d)
	}
	if r.Disagreement != "" {
		fmt.Fprintf(&b, "Plain vs layout-robust: %s.\n\n", triageMDEscape(r.Disagreement))
	}
	if ev := r.Instructions; ev != nil {
		fmt.Fprintf(&b, "Instructions: %s.\n\n", triageMDEscape(ev.Text))
	}
	fmt.Fprintf(&b, "Metric %s (%s%s), base %s, changed %s, knobs preset %s.\n",
		code(r.Metric), triageUnit(r.Unit), triageBetter(r.Better), code(gitrev.Short(r.Base.Hash)), code(gitrev.Short(r.Changed.Hash)), code(r.Preset))
	for _, e := range r.Experiments {
		fmt.Fprintf(&b, "\n#### %s\n\n%s: %s.\n\n", triageHeading(e), triageMDEscape(triageCapitalize(e.Title)), triageMDEscape(e.Reason))
		// The failed column only when a run failed: lkp's fail:runs.
		failed := triageHasFailed(e.Columns)
		switch {
		case len(e.Columns) > 0 && failed:
			b.WriteString("| build | runs | failed | median | change |\n|---|---:|---:|---:|---:|\n")
		case len(e.Columns) > 0:
			b.WriteString("| build | runs | median | change |\n|---|---:|---:|---:|\n")
		}
		for i, c := range e.Columns {
			change := ""
			if i > 0 {
				change = pct(c.Change)
			}
			label := c.Label
			if c.Variant != "" && !strings.Contains(label, c.Variant) {
				label += " (" + c.Variant + ")"
			}
			if failed {
				fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |\n", triageMDEscape(label), c.N+c.Failed, c.Failed, triageValue(c.Median), change)
			} else {
				fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", triageMDEscape(label), c.N, triageValue(c.Median), change)
			}
		}
		if e.Name == triage.SweepExperiment {
			b.WriteString("\n| layout | base | changed | change |\n|---|---:|---:|---:|\n")
			for _, l := range e.Layouts {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", triageMDEscape(l.Variant), triageValue(l.Base), triageValue(l.Changed), pct(l.Change))
			}
		}
	}
	if len(r.Suspects) > 0 {
		b.WriteString("\n#### layout suspects\n\n")
		for _, s := range r.Suspects {
			fmt.Fprintf(&b, "- %s (%s in %s): offset %d → %d mod 64; %s\n", code(s.Name), s.Kind, s.Section, s.OffBase, s.OffChanged, triageMDEscape(s.Why))
		}
	}
	if sp := r.SourcePatch; sp != nil {
		fmt.Fprintf(&b, "\n#### source patch\n\n%s: %s, %d bytes at %s (%s); `git apply` in a checkout of %s.\n",
			triageCapitalize(triageSourcePatchUse(sp)), triageMDEscape(sp.Root), sp.Bytes, code(fmt.Sprintf("%s:%d", sp.File, sp.Line)),
			triageMDEscape(sp.Check), code(gitrev.Short(r.Changed.Hash)))
		if sp.Identical {
			b.WriteString("\n- the patched build loads the base build's code and data byte for byte: the commit changes nothing else in the build")
		}
		for _, n := range sp.Notes {
			fmt.Fprintf(&b, "\n- %s", triageMDEscape(n))
		}
		if len(sp.Notes) > 0 || sp.Identical {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "\n```diff\n%s```\n", sp.Diff)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n#### notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", triageMDEscape(n))
		}
	}
	fmt.Fprintf(&b, "\nBudget: %s.\n", triageBudget(r))
	if opt.Command != "" {
		fmt.Fprintf(&b, "\nReproduce: %s\n", code(opt.Command))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// triageHasFailed reports whether any build of an experiment had failed
// runs.
func triageHasFailed(cols []triage.Column) bool {
	for _, c := range cols {
		if c.Failed > 0 {
			return true
		}
	}
	return false
}

func triageCapitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// mdEscape escapes the characters Markdown would take as markup in prose.
func triageMDEscape(s string) string {
	r := strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;")
	return r.Replace(s)
}
