package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/report/doc"
)

// BisectReport is what WriteBisect prints: a bisection and its context.
type BisectReport struct {
	Result *bisect.Result
	Job    string            // the atomic job's name
	Repo   string            // the repository's path
	Params map[string]string // the atomic job's parameters
	// Mode is "plain", "forced" or "sweep"; ModeDetail says how (the
	// variant, the layouts).
	Mode, ModeDetail string
	// Table compares parent and culprit over every metric, from the
	// check's fresh runs; nil without a culprit.
	Table *compare.Table
	// Command reproduces the bisection.
	Command string
}

// WriteBisect prints r in format ("" is "text"):
//
//   - text: the verdict (first bad commit, the check, triage), the steps,
//     the skipped commits, the cost, then the parent-vs-culprit table in
//     the 0-day layout;
//   - markdown: the same for a pull-request or issue comment;
//   - json: the bisect.Result (fields as its JSON tags), with job, repo,
//     mode and the table (the compare JSON document) beside it;
//   - email: the 0-day robot's message ("perfbot noticed a 7.9% regression
//     of M on: commit ..."), with the table under "Details are as below".
func WriteBisect(w io.Writer, r *BisectReport, format Format) error {
	if r == nil || r.Result == nil {
		return fmt.Errorf("report bisect: no result")
	}
	var b bytes.Buffer
	var err error
	switch format {
	case "", "text":
		err = bisectText(&b, r)
	case "markdown":
		err = bisectMarkdown(&b, r)
	case "json":
		err = bisectJSON(&b, r)
	case "email":
		err = bisectEmail(&b, r)
	default:
		return fmt.Errorf("report: unknown bisect format %q (valid: %s)", format, JoinFormats(BisectFormats))
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

// bisectKind is "regression" or "improvement".
func bisectKind(res *bisect.Result) string {
	if res.Improvement {
		return "improvement"
	}
	return "regression"
}

// bisectModeLine describes how each commit was built.
func bisectModeLine(r *BisectReport) string {
	var s string
	switch r.Mode {
	case "forced":
		s = "layout-robust: every commit built with forced alignment"
	case "sweep":
		s = "layout-robust: every commit measured under a sweep of layouts (the figure is the geometric mean over the layouts)"
	default:
		s = "plain build, like the 0-day robot"
	}
	if r.Result.Fixed > 0 {
		s = fmt.Sprintf("fixed scheme: %d runs per commit, midpoint of the ends' means (no test, no check)", r.Result.Fixed)
	}
	if r.ModeDetail != "" {
		s += " (" + r.ModeDetail + ")"
	}
	return s
}

// bisectHeadline is the one-line verdict.
func bisectHeadline(r *BisectReport) string {
	res := r.Result
	switch {
	case res.Culprit != nil && res.Found():
		return fmt.Sprintf("first bad commit: %s %s", res.Culprit.Short(), res.Culprit.Subject)
	case res.Culprit != nil:
		return fmt.Sprintf("first bad commit (NOT confirmed by the check): %s %s", res.Culprit.Short(), res.Culprit.Subject)
	case len(res.Candidates) > 0:
		return fmt.Sprintf("no single culprit: skipped commits leave %d candidates", len(res.Candidates))
	}
	return "no culprit"
}

// bisectCost is the cost line.
func bisectCost(res *bisect.Result) string {
	var parts []string
	builds := bisectPlural(res.Builds, "build", "builds")
	if res.BuildFailures > 0 {
		builds += fmt.Sprintf(" (%d failed)", res.BuildFailures)
	}
	parts = append(parts, builds)
	runs := fmt.Sprintf("%s taken", bisectPlural(res.Runs, "run", "runs"))
	if bisectMulti(res) && len(res.Culprits) > 0 {
		runs += fmt.Sprintf(" (%d until the first culprit was confirmed, %d after it to look for more; %d of all to check culprits)",
			res.FirstRuns, res.ExtraRuns(), res.CheckRuns)
	} else if res.CheckRuns > 0 {
		runs += fmt.Sprintf(" (%d to find the culprit, %d to check it)", res.Runs-res.CheckRuns, res.CheckRuns)
	}
	parts = append(parts, runs)
	if reused := res.RunsUsed - res.Runs; reused > 0 {
		parts = append(parts, fmt.Sprintf("%d reused from the store", reused))
	}
	parts = append(parts, "wall time "+bisectDuration(res.Wall))
	return strings.Join(parts, ", ")
}

func bisectPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func bisectDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// bisectCmp formats a comparison for the steps table: "+0.4% same".
func bisectCmp(c *bisect.Comparison) string {
	if c == nil {
		return "-"
	}
	if c.Test == "mean" {
		return pct(c.Change)
	}
	return pct(c.Change) + " " + c.Decision
}

// bisectEnds describes the ends' comparison.
func bisectEnds(res *bisect.Result) string {
	c := res.Ends
	if c == nil {
		return "not compared"
	}
	s := fmt.Sprintf("%s %s", res.Metric, pct(c.Change))
	if c.Test != "mean" {
		s += fmt.Sprintf(" [%s, %s], %s %s", pct(c.Lo), pct(c.Hi), c.Test, pValue(c.P))
	}
	return s + fmt.Sprintf(" (%d and %d runs)", res.EndsRuns[0], res.EndsRuns[1])
}

func bisectText(b *bytes.Buffer, r *BisectReport) error {
	res := r.Result
	better := ""
	if res.Better != 0 {
		better = ", " + res.Better.String() + " is better"
	}
	fmt.Fprintf(b, "perfbot bisect: %s (%s%s)\n", r.Job, res.Metric, better)
	fmt.Fprintf(b, "range: good %s .. bad %s, %s on the first-parent history: %s\n",
		res.Good.Short(), res.Bad.Short(), bisectPlural(res.Commits, "commit", "commits"), bisectEnds(res))
	fmt.Fprintf(b, "mode: %s\n\n", bisectModeLine(r))
	fmt.Fprintf(b, "%s\n", bisectHeadline(r))
	for _, l := range bisectMainMerge(res) {
		fmt.Fprintf(b, "  %s\n", l)
	}
	for _, c := range res.Candidates {
		fmt.Fprintf(b, "  candidate %s %s\n", c.Short(), c.Subject)
	}
	if res.Check != nil {
		fmt.Fprintf(b, "check: %s\n", res.Check.Reason)
	}
	if t := res.Triage; t != nil {
		if t.Error != "" {
			fmt.Fprintf(b, "triage: failed: %s\n", t.Error)
		} else {
			fmt.Fprintf(b, "triage: %s: %s\n", t.Verdict, t.Sentence)
		}
	}
	for _, n := range bisectNotes(res) {
		fmt.Fprintf(b, "note: %s\n", n)
	}
	if bisectMulti(res) {
		bisectCulpritsText(b, res)
	}

	if len(res.Steps) > 0 {
		b.WriteString("\nsteps:\n")
		g := &grid{}
		// With several ranges, a column says which one each step searched.
		head := []string{"step", "commit", "left", "runs", "vs good", "vs bad", "verdict"}
		align := "rlrrlll"
		if bisectMulti(res) {
			head, align = append([]string{"step", "range"}, head[1:]...), "rr"+align[1:]
		}
		for col, h := range head {
			bisectPut(g, 0, col, h, align[col])
		}
		for i, s := range res.Steps {
			v := string(s.Verdict)
			if s.Guessed {
				v += " (guess)"
			}
			if s.Unchanged {
				v += " (by its diff)"
			}
			row := []string{fmt.Sprint(s.N), s.Commit.Short(), fmt.Sprint(s.Remaining), fmt.Sprint(s.Runs), bisectCmp(s.VsGood), bisectCmp(s.VsBad), v}
			if bisectMulti(res) {
				row = append([]string{row[0], fmt.Sprint(s.Range + 1)}, row[1:]...)
			}
			for col, cell := range row {
				bisectPut(g, i+1, col, cell, align[col])
			}
		}
		var tb bytes.Buffer
		g.write(&tb)
		for _, l := range strings.Split(strings.TrimRight(tb.String(), "\n"), "\n") {
			b.WriteString("  " + strings.TrimRight(l, " ") + "\n")
		}
		if n := res.UnchangedSteps(); n > 0 {
			fmt.Fprintf(b, "  %s decided by the diff from a classified neighbour (only paths the job ignores changed), without runs\n", bisectPlural(n, "step", "steps"))
		}
	}
	if sk := res.Skipped(); len(sk) > 0 {
		b.WriteString("\nskipped (like git bisect skip):\n")
		for _, s := range sk {
			fmt.Fprintf(b, "  %s %s: %s\n", s.Commit.Short(), s.Commit.Subject, s.Reason)
		}
	}
	fmt.Fprintf(b, "\ncost: %s\n", bisectCost(res))
	if r.Command != "" {
		fmt.Fprintf(b, "to reproduce: %s\n", r.Command)
	}
	if r.Table != nil {
		fmt.Fprintf(b, "\nparent %s vs culprit %s, fresh interleaved runs:\n\n", res.Parent.Short(), res.Culprit.Short())
		return WriteNCompare(b, r.Table, Options{All: true})
	}
	return nil
}

// bisectPut adds a one-column cell with two spaces between columns.
func bisectPut(g *grid, row, col int, text string, align byte) {
	m := "  "
	if col == 0 {
		m = ""
	}
	g.put(row, col, 1, text, align, m)
}

// bisectNotes gathers the steps' notes, once each.
func bisectNotes(res *bisect.Result) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range res.Notes {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, s := range res.Steps {
		if s.Note != "" && !seen[s.Note] {
			seen[s.Note] = true
			out = append(out, fmt.Sprintf("step %d (%s): %s", s.N, s.Commit.Short(), s.Note))
		}
		if s.Guessed {
			out = append(out, fmt.Sprintf("step %d (%s): undecided after %d runs, placed on the %s side by the nearer end", s.N, s.Commit.Short(), s.Runs, s.Verdict))
		}
	}
	return out
}

func bisectMarkdown(b *bytes.Buffer, r *BisectReport) error {
	res := r.Result
	fmt.Fprintf(b, "### perfbot bisect: %s\n\n", mdEscape(bisectHeadline(r)))
	fmt.Fprintf(b, "- job %s, metric %s", code(r.Job), code(res.Metric))
	if res.Better != 0 {
		fmt.Fprintf(b, " (%s is better)", res.Better)
	}
	fmt.Fprintf(b, "\n- range: good %s .. bad %s, %s: %s\n", code(res.Good.Short()), code(res.Bad.Short()),
		bisectPlural(res.Commits, "commit", "commits"), mdEscape(bisectEnds(res)))
	fmt.Fprintf(b, "- mode: %s\n", mdEscape(bisectModeLine(r)))
	for _, l := range bisectMainMerge(res) {
		fmt.Fprintf(b, "- %s\n", mdEscape(l))
	}
	if res.Check != nil {
		fmt.Fprintf(b, "- check: %s\n", mdEscape(res.Check.Reason))
	}
	if t := res.Triage; t != nil {
		if t.Error != "" {
			fmt.Fprintf(b, "- triage failed: %s\n", mdEscape(t.Error))
		} else {
			fmt.Fprintf(b, "- triage: **%s**: %s\n", t.Verdict, mdEscape(t.Sentence))
		}
	}
	for _, c := range res.Candidates {
		fmt.Fprintf(b, "- candidate %s %s\n", code(c.Short()), mdEscape(c.Subject))
	}
	for _, n := range bisectNotes(res) {
		fmt.Fprintf(b, "- note: %s\n", mdEscape(n))
	}
	fmt.Fprintf(b, "- cost: %s\n", mdEscape(bisectCost(res)))
	if bisectMulti(res) {
		bisectCulpritsMarkdown(b, res)
	}
	if len(res.Steps) > 0 {
		rangeCol, rangeSep := "", ""
		if bisectMulti(res) {
			rangeCol, rangeSep = " range |", " ---: |"
		}
		fmt.Fprintf(b, "\n| step |%s commit | left | runs | vs good | vs bad | verdict |\n| ---: |%s --- | ---: | ---: | --- | --- | --- |\n", rangeCol, rangeSep)
		for _, s := range res.Steps {
			v := string(s.Verdict)
			if s.Guessed {
				v += " (guess)"
			}
			if s.Verdict == bisect.Skip {
				v += ": " + s.Reason
			}
			rangeCell := ""
			if bisectMulti(res) {
				rangeCell = fmt.Sprintf(" %d |", s.Range+1)
			}
			fmt.Fprintf(b, "| %d |%s %s %s | %d | %d | %s | %s | %s |\n", s.N, rangeCell, code(s.Commit.Short()), mdEscape(s.Commit.Subject),
				s.Remaining, s.Runs, bisectCmp(s.VsGood), bisectCmp(s.VsBad), mdEscape(v))
		}
	}
	if r.Table != nil {
		fmt.Fprintf(b, "\nParent %s vs culprit %s, fresh interleaved runs:\n\n", code(res.Parent.Short()), code(res.Culprit.Short()))
		return WriteMarkdown(b, r.Table, Options{All: true})
	}
	return nil
}

func bisectJSON(b *bytes.Buffer, r *BisectReport) error {
	doc := struct {
		Version    int               `json:"version"`
		Job        string            `json:"job"`
		Repo       string            `json:"repo"`
		Params     map[string]string `json:"params,omitempty"`
		Mode       string            `json:"mode"`
		ModeDetail string            `json:"mode_detail,omitempty"`
		Found      bool              `json:"found"`
		Better     string            `json:"better"`
		Result     *bisect.Result    `json:"result"`
		Table      *doc.CompareTable `json:"table,omitempty"`
		Command    string            `json:"command,omitempty"`
	}{doc.BisectVersion, r.Job, r.Repo, r.Params, r.Mode, r.ModeDetail, r.Result.Found(), r.Result.Better.String(), r.Result, nil, r.Command}
	if doc.Mode == "" {
		doc.Mode = "plain"
	}
	if r.Table != nil {
		t, err := compareTable(JobTable{Name: r.Job, Table: r.Table})
		if err != nil {
			return err
		}
		doc.Table = &t
	}
	enc := json.NewEncoder(b)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// bisectMainMerge says how the first culprit relates to merges: the merge
// it came in through, or what is known of a culprit that is a merge.
func bisectMainMerge(res *bisect.Result) []string {
	if len(res.Culprits) > 0 {
		c := res.Culprits[0]
		var out []string
		if v := culpritVia(c); v != "" {
			out = append(out, v)
		}
		if m := culpritMerge(c); m != "" {
			out = append(out, m)
		}
		return out
	}
	if res.Merge && res.Culprit != nil {
		return []string{culpritMerge(bisect.Culprit{Commit: *res.Culprit, Merge: true})}
	}
	return nil
}
