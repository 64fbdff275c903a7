package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
)

// FindingSubject is the subject line of a finding's mail:
// "[branch] <sha12>: <metric> <change> regression" (or improvement, or
// alignment artifact).
func FindingSubject(f *finding.Finding) string {
	return fmt.Sprintf("[%s] %s: %s %+.1f%% %s", f.Branch, gitrev.Short(f.Culprit), f.Metric, f.Change, f.Kind())
}

// WriteFindingText writes a finding as the 0-day robot's mail body.
func WriteFindingText(w io.Writer, f *finding.Finding) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Greeting,\n\nperfbot noticed a %+.1f%% %s of %s on:\n\n", f.Change, f.Kind(), f.Metric)
	fmt.Fprintf(&b, "commit: %s (%q)\nauthor: %s\nbranch: %s of %s\ncompared with its parent %s\n\n", f.Culprit, f.Subject, f.Author, f.Branch, f.Repo, f.Parent)
	fmt.Fprintf(&b, "in testcase: %s\n", f.Job)
	if len(f.Params) > 0 {
		keys := make([]string, 0, len(f.Params))
		for k := range f.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("with following parameters:\n\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "\t%s: %s\n", k, f.Params[k])
		}
	}
	fmt.Fprintf(&b, "\nverdict: %s\n%s\n", f.Verdict, f.Sentence)
	if len(f.Metrics) > 1 {
		b.WriteString("\nIn addition to that, the commit also has significant impact on the following tests:\n\n")
		for _, m := range f.Metrics[1:] {
			fmt.Fprintf(&b, "  %-24s %-32s %+7.1f%%  %s\n", m.Job, m.Metric, m.Change, m.Verdict)
		}
	}
	if f.Table != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(f.Table, "\n"))
	}
	if f.Triage != "" {
		fmt.Fprintf(&b, "\ntriage:\n\n%s\n", strings.TrimRight(f.Triage, "\n"))
	}
	if f.Bisect != "" {
		fmt.Fprintf(&b, "\nhow it was found:\n\n%s\n", strings.TrimRight(f.Bisect, "\n"))
	}
	if len(f.Reproduce) > 0 {
		b.WriteString("\nTo reproduce:\n\n")
		for _, c := range f.Reproduce {
			fmt.Fprintf(&b, "        %s\n", c)
		}
	}
	b.WriteString("\n-- \nperfbot\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteFindingMarkdown writes a finding for a web page or an issue.
func WriteFindingMarkdown(w io.Writer, f *finding.Finding) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", mdEscape(FindingSubject(f)))
	fmt.Fprintf(&b, "- commit: `%s` %s\n- author: %s\n- branch: %s\n- job: %s\n- verdict: **%s**\n\n%s\n\n",
		f.Culprit, mdEscape(f.Subject), mdEscape(f.Author), mdEscape(f.Branch), mdEscape(f.Job), f.Verdict, mdEscape(f.Sentence))
	b.WriteString("| job | metric | change | verdict |\n|---|---|---:|---|\n")
	for _, m := range f.Metrics {
		fmt.Fprintf(&b, "| %s | %s | %+.1f%% | %s |\n", mdEscape(m.Job), mdEscape(m.Metric), m.Change, m.Verdict)
	}
	if f.Table != "" {
		fmt.Fprintf(&b, "\n```\n%s\n```\n", strings.TrimRight(f.Table, "\n"))
	}
	if f.Triage != "" {
		fmt.Fprintf(&b, "\n<details><summary>triage</summary>\n\n```\n%s\n```\n</details>\n", strings.TrimRight(f.Triage, "\n"))
	}
	if len(f.Reproduce) > 0 {
		b.WriteString("\nTo reproduce:\n\n```sh\n" + strings.Join(f.Reproduce, "\n") + "\n```\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
