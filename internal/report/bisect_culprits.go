// Every culprit of a bisection, the ranges searched, and merges.

package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/perfbot/perfbot/internal/bisect"
)

// bisectMulti reports whether the bisection has more to say than one
// culprit: several culprits, or ranges searched after the main one.
func bisectMulti(res *bisect.Result) bool {
	return len(res.Culprits) > 1 || len(res.Ranges) > 1
}

// culpritChange is "+30.0% [+29.9%, +31.1%]", from the check.
func culpritChange(c bisect.Culprit) string {
	if c.Check == nil {
		return pct(c.Change)
	}
	cmp := c.Check.Comparison
	return fmt.Sprintf("%s [%s, %s]", pct(cmp.Change), pct(cmp.Lo), pct(cmp.Hi))
}

// culpritVia is "through the merge M (subject)" for a culprit found inside
// merges (outermost first), "" for one on the first-parent history.
func culpritVia(c bisect.Culprit) string {
	if len(c.Via) == 0 {
		return ""
	}
	var ms []string
	for _, m := range c.Via {
		ms = append(ms, fmt.Sprintf("%s %s", m.Short(), m.Subject))
	}
	kind := "merge"
	if len(ms) > 1 {
		kind = "merges"
	}
	return fmt.Sprintf("came in through the %s %s; found inside the merged side", kind, strings.Join(ms, ", then "))
}

// culpritMerge says what is known of a culprit that is a merge: an
// interaction, why its inside was not searched to the end, or how to
// search it ("" for a culprit that is not a merge).
func culpritMerge(c bisect.Culprit) string {
	switch {
	case !c.Merge:
		return ""
	case c.Interaction:
		return "it is a merge, and the culprit itself: " + c.Note
	case c.Note != "":
		return "it is a merge: " + c.Note
	}
	return fmt.Sprintf("it is a merge: to look inside it, bisect from its first parent to its second parent (%s^2)", c.Commit.Short())
}

// culpritLines are the lines under a culprit: how it came in, merges, triage.
func culpritLines(c bisect.Culprit) []string {
	var out []string
	if v := culpritVia(c); v != "" {
		out = append(out, v)
	}
	if m := culpritMerge(c); m != "" {
		out = append(out, m)
	}
	if t := c.Triage; t != nil {
		if t.Error != "" {
			out = append(out, "triage failed: "+t.Error)
		} else {
			out = append(out, fmt.Sprintf("triage: %s: %s", t.Verdict, t.Sentence))
		}
	}
	return out
}

// rangeName is "main", "before 444444444444", "inside 777777777777".
func rangeName(rg bisect.Range) string {
	of := "the candidates"
	if rg.Of != nil {
		of = rg.Of.Short()
	}
	switch rg.Kind {
	case bisect.RangeBefore, bisect.RangeAfter:
		return string(rg.Kind) + " " + of
	case bisect.RangeMerge:
		return "inside " + of
	}
	return string(rg.Kind)
}

// rangeOutcome says how a range's search ended.
func rangeOutcome(rg bisect.Range) string {
	short := func() string {
		if rg.Culprit == nil {
			return "?"
		}
		return rg.Culprit.Short()
	}
	switch rg.Status {
	case bisect.RangeCulprit:
		if rg.Merge {
			return "culprit " + short() + " (a merge)"
		}
		return "culprit " + short()
	case bisect.RangeUnconfirmed:
		return "culprit " + short() + ", not confirmed"
	case bisect.RangeCandidates:
		return fmt.Sprintf("%d candidates (skipped commits)", len(rg.Candidates))
	case bisect.RangeSame:
		if rg.Note != "" {
			return "no change: " + rg.Note
		}
		return "no change"
	case bisect.RangeSmall:
		return "a change within --effect: not searched"
	case bisect.RangeOtherWay:
		return "a change the other way: not searched"
	case bisect.RangeUndecided:
		return "undecided: not searched"
	case bisect.RangeBudget:
		return rg.Note
	case bisect.RangeSplit, bisect.RangeFailed:
		return string(rg.Status) + ": " + rg.Note
	}
	return string(rg.Status)
}

// bisectCulpritsText writes the culprits and the ranges.
func bisectCulpritsText(b *bytes.Buffer, res *bisect.Result) {
	fmt.Fprintf(b, "\n%s:\n", bisectPlural(len(res.Culprits), "culprit", "culprits"))
	for i, c := range res.Culprits {
		fmt.Fprintf(b, "  %d. %s %s: %s\n", i+1, c.Commit.Short(), c.Commit.Subject, culpritChange(c))
		for _, l := range culpritLines(c) {
			fmt.Fprintf(b, "     %s\n", l)
		}
	}
	b.WriteString("\nranges:\n")
	g := &grid{}
	for col, h := range []string{"range", "searched", "commits", "good..bad", "ends", "outcome"} {
		bisectPut(g, 0, col, h, "rlrlll"[col])
	}
	for i, rg := range res.Ranges {
		row := []string{fmt.Sprint(i + 1), rangeName(rg), fmt.Sprint(rg.Commits), rg.Good.Short() + ".." + rg.Bad.Short(), bisectCmp(rg.Ends), rangeOutcome(rg)}
		for col, cell := range row {
			bisectPut(g, i+1, col, cell, "rlrlll"[col])
		}
	}
	var tb bytes.Buffer
	g.write(&tb)
	for _, l := range strings.Split(strings.TrimRight(tb.String(), "\n"), "\n") {
		b.WriteString("  " + strings.TrimRight(l, " ") + "\n")
	}
	if un := res.Unsearched(); len(un) > 0 {
		fmt.Fprintf(b, "the budget ran out: %s not searched to the end; run again with a larger --max-culprits or --extra-runs to go on\n", bisectPlural(len(un), "range", "ranges"))
	}
}

// bisectCulpritsMarkdown writes the culprits and the ranges.
func bisectCulpritsMarkdown(b *bytes.Buffer, res *bisect.Result) {
	fmt.Fprintf(b, "\n**%s:**\n\n", bisectPlural(len(res.Culprits), "culprit", "culprits"))
	for i, c := range res.Culprits {
		fmt.Fprintf(b, "%d. %s %s: %s\n", i+1, code(c.Commit.Short()), mdEscape(c.Commit.Subject), mdEscape(culpritChange(c)))
		for _, l := range culpritLines(c) {
			fmt.Fprintf(b, "   - %s\n", mdEscape(l))
		}
	}
	b.WriteString("\n| range | searched | commits | good..bad | ends | outcome |\n| ---: | --- | ---: | --- | --- | --- |\n")
	for i, rg := range res.Ranges {
		fmt.Fprintf(b, "| %d | %s | %d | %s | %s | %s |\n", i+1, mdEscape(rangeName(rg)), rg.Commits,
			code(rg.Good.Short()+".."+rg.Bad.Short()), bisectCmp(rg.Ends), mdEscape(rangeOutcome(rg)))
	}
	if un := res.Unsearched(); len(un) > 0 {
		fmt.Fprintf(b, "\nThe budget ran out: %s not searched to the end.\n", bisectPlural(len(un), "range", "ranges"))
	}
}

// bisectCulpritsEmail lists the culprits after the first, as the 0-day
// robot lists other tests a commit moved.
func bisectCulpritsEmail(b *bytes.Buffer, res *bisect.Result) {
	if len(res.Culprits) > 1 {
		fmt.Fprintf(b, "\nIn addition to that, the bisection found %s in the range that also changed %s:\n\n",
			bisectPlural(len(res.Culprits)-1, "more commit", "more commits"), res.Metric)
		for _, c := range res.Culprits[1:] {
			fmt.Fprintf(b, "commit: %s (%q): %s\n", c.Commit.Hash, c.Commit.Subject, culpritChange(c))
			for _, l := range culpritLines(c) {
				fmt.Fprintf(b, "  %s\n", l)
			}
		}
	}
	if un := res.Unsearched(); len(un) > 0 {
		fmt.Fprintf(b, "\nThe search for more culprits stopped at its budget: %s not searched to the end.\n", bisectPlural(len(un), "range", "ranges"))
	}
}
