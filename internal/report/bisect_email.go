// The 0-day robot's message for a bisection.

package report

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/gitrev"
)

// bisectChange is the size of the change for the email's first line: the
// check's estimate, else the ends'.
func bisectChange(res *bisect.Result) float64 {
	if res.Check != nil {
		return res.Check.Comparison.Change
	}
	if res.Ends != nil {
		return res.Ends.Change
	}
	return math.NaN()
}

func bisectEmail(b *bytes.Buffer, r *BisectReport) error {
	res := r.Result
	b.WriteString("Hello,\n\n")
	change := bisectChange(res)
	size := "a"
	if finite(change) {
		size = fmt.Sprintf("a %.1f%%", math.Abs(change))
	}
	switch {
	case res.Culprit != nil && res.Found():
		fmt.Fprintf(b, "perfbot noticed %s %s of %s on:\n\n\n", size, bisectKind(res), res.Metric)
		fmt.Fprintf(b, "commit: %s (%q)\n", res.Culprit.Hash, res.Culprit.Subject)
	case res.Culprit != nil:
		fmt.Fprintf(b, "perfbot bisected %s %s of %s to the commit below, but fresh runs did not confirm it:\n\n\n", size, bisectKind(res), res.Metric)
		fmt.Fprintf(b, "commit: %s (%q)\n", res.Culprit.Hash, res.Culprit.Subject)
	default:
		fmt.Fprintf(b, "perfbot noticed %s %s of %s but could not name a single commit; the first bad commit is one of:\n\n\n", size, bisectKind(res), res.Metric)
		for _, c := range res.Candidates {
			fmt.Fprintf(b, "commit: %s (%q)\n", c.Hash, c.Subject)
		}
	}
	if r.Repo != "" {
		fmt.Fprintf(b, "repository: %s\n", r.Repo)
	}
	fmt.Fprintf(b, "\ntestcase: %s\n", r.Job)
	fmt.Fprintf(b, "mode: %s\n", bisectModeLine(r))
	if len(r.Params) > 0 {
		b.WriteString("parameters:\n\n")
		keys := make([]string, 0, len(r.Params))
		for k := range r.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(b, "\t%s: %s\n", k, r.Params[k])
		}
	}
	if t := res.Triage; t != nil && t.Error == "" {
		fmt.Fprintf(b, "\nperfbot triage says: %s\n", t.Sentence)
	}
	for _, l := range bisectMainMerge(res) {
		switch {
		case strings.HasPrefix(l, "it is a merge: to look inside it"):
			l = "The commit is a merge: bisect its second parent's history to look inside it."
		case strings.HasPrefix(l, "it "):
			l = "The commit " + strings.TrimPrefix(l, "it ") + "."
		default:
			l = "The commit " + l + "."
		}
		fmt.Fprintf(b, "\n%s\n", l)
	}
	bisectCulpritsEmail(b, res)
	b.WriteString("\n\nIf you fix the issue in a separate patch/commit (i.e. not just a new version of\nthe same patch/commit), kindly add following tags\n")
	if res.Culprit != nil {
		fmt.Fprintf(b, "| Reported-by: perfbot\n| Fixes: %s (%q)\n", res.Culprit.Short(), res.Culprit.Subject)
	}
	b.WriteString("\n\nDetails are as below:\n")
	b.WriteString("-------------------------------------------------------------------------------------------------->\n\n")
	fmt.Fprintf(b, "The bisection: good %s .. bad %s, %s: %s.\n", res.Good.Short(), res.Bad.Short(),
		bisectPlural(res.Commits, "commit", "commits"), bisectEnds(res))
	fmt.Fprintf(b, "%d steps, %s.\n", len(res.Steps), bisectCost(res))
	if res.Check != nil {
		fmt.Fprintf(b, "Check: %s\n", res.Check.Reason)
	}
	if sk := res.Skipped(); len(sk) > 0 {
		b.WriteString("Skipped:\n")
		for _, s := range sk {
			fmt.Fprintf(b, "  %s %s: %s\n", s.Commit.Short(), s.Commit.Subject, s.Reason)
		}
	}
	if r.Command != "" {
		fmt.Fprintf(b, "\nTo reproduce:\n\n\t%s\n", r.Command)
	}
	if r.Table != nil {
		b.WriteString("\n=========================================================================================\n")
		fmt.Fprintf(b, "%s\n\n", r.Job)
		b.WriteString("commit: \n")
		for _, c := range []*gitrev.Commit{res.Parent, res.Culprit} {
			fmt.Fprintf(b, "  %s (%q)\n", c.Short(), c.Subject)
		}
		b.WriteString("\n")
		if err := WriteNCompare(b, r.Table, Options{All: true}); err != nil {
			return err
		}
	}
	b.WriteString("\n\n\nDisclaimer:\nResults have been estimated on a shared machine by perfbot and may not be\nreproducible elsewhere; the runs, logs and builds are kept in the results store.\n")
	return nil
}
