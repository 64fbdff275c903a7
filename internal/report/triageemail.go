// The email report of a triage: the 0-day robot's message, in its order.

package report

import (
	"bytes"
	"fmt"
	"io"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/triage"
	"github.com/perfbot/perfbot/internal/verdict"
)

func writeTriageEmail(w io.Writer, r *triage.Result, opt TriageOptions) error {
	var b bytes.Buffer
	short := gitrev.Short(r.Changed.Hash)
	fmt.Fprintf(&b, "Subject: [perfbot] %s: %s %s: %s\n\n", short, r.Metric, pct(r.Change), triageSubject(r.Verdict))
	b.WriteString("Hello,\n\n")
	fmt.Fprintf(&b, "%s\n\n", r.Sentence)
	fmt.Fprintf(&b, "commit: %s\n", triageCommitLine(r.Changed))
	fmt.Fprintf(&b, "base: %s\n\n", triageCommitLine(r.Base))
	fmt.Fprintf(&b, "testcase: %s\n", r.Job)
	fmt.Fprintf(&b, "metric: %s (%s%s)\n", r.Metric, triageUnit(r.Unit), triageBetter(r.Better))
	fmt.Fprintf(&b, "layout knobs: %s\n", r.Preset)
	if opt.Machine != "" {
		fmt.Fprintf(&b, "test machine: %s\n", opt.Machine)
	}
	fmt.Fprintf(&b, "verdict: %s\n", r.Verdict)
	if d := triageDecidedBy(r); d != "" {
		fmt.Fprintf(&b, "decided by: %s\n", d)
	}
	if r.Disagreement != "" {
		fmt.Fprintf(&b, "\nNote: %s.\n", r.Disagreement)
	}
	if opt.Command != "" {
		fmt.Fprintf(&b, "\nTo reproduce:\n\n        %s\n", opt.Command)
	}
	b.WriteString("\nDetails are as below:\n")
	b.WriteString("-------------------------------------------------------------------------------------------------->\n")
	for _, e := range r.Experiments {
		b.WriteString("\n=========================================================================================\n")
		fmt.Fprintf(&b, "%s: %s\n\n", triageHeading(e), e.Title)
		if len(e.Columns) > 0 {
			b.WriteString("commit: \n")
			for _, c := range e.Columns {
				fmt.Fprintf(&b, "  %s\n", triageColumnLine(r, c))
			}
			b.WriteString("\n")
		}
		if e.Table != nil {
			if err := WriteNCompare(&b, e.Table, Options{All: true}); err != nil {
				return err
			}
		}
		if e.Name == triage.SweepExperiment {
			b.WriteString("\n")
			triageLayoutsText(&b, e)
		}
		fmt.Fprintf(&b, "\n%s: %s\n", e.Outcome, e.Reason)
	}
	if len(r.Suspects) > 0 || r.Padding != "" {
		b.WriteString("\n=========================================================================================\n")
		triageSuspectsText(&b, r)
	}
	if r.SourcePatch != nil {
		b.WriteString("\n=========================================================================================\n")
		triageSourcePatchText(&b, r)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "Note: %s\n", n)
		}
	}
	fmt.Fprintf(&b, "\nBudget: %s.\n", triageBudget(r))
	b.WriteString("\nDisclaimer:\nResults were measured by perfbot on the test machine above, in interleaved runs\n" +
		"of both builds. They are an estimate of the change under the layouts tried, not of\n" +
		"every workload: re-run the triage before acting on a verdict of \"inconclusive\".\n")
	_, err := w.Write(b.Bytes())
	return err
}

func triageUnit(u string) string {
	if u == "" {
		return ""
	}
	return u + ", "
}

func triageSubject(v verdict.Verdict) string {
	switch v {
	case verdict.RealRegression:
		return "a real regression"
	case verdict.RealImprovement:
		return "a real improvement"
	case verdict.TextAlignment:
		return "text alignment artifact, not a real change"
	case verdict.DataAlignment:
		return "data alignment artifact, not a real change"
	case verdict.NoChange:
		return "no change"
	}
	return "inconclusive"
}

// triageColumnLine names an experiment's build as the 0-day emails list
// commits: a short id and the subject.
func triageColumnLine(r *triage.Result, c triage.Column) string {
	s := gitrev.Short(c.Commit)
	if len(s) > 10 {
		s = s[:10]
	}
	if c.Variant != "" {
		s += "+" + c.Variant
	}
	subject := r.Base.Subject
	if c.Commit == r.Changed.Hash {
		subject = r.Changed.Subject
	}
	if subject == "" {
		return s
	}
	return fmt.Sprintf("%s (%q)", s, subject)
}
