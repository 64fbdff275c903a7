package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/triage"
)

// TriageFormats lists the formats of WriteTriage.
var TriageFormats = []string{"text", "markdown", "json", "email"}

// TriageOptions selects how WriteTriage prints a triage.
type TriageOptions struct {
	// Format is one of TriageFormats; "" means "text".
	Format string
	// Machine describes the test machine for the email ("2 vCPU AMD EPYC
	// ..."); "" leaves the line out.
	Machine string
	// Command is the command that reproduces the triage, for the email
	// and Markdown; "" leaves it out.
	Command string
}

// WriteTriage prints a triage's verdict and evidence:
//
//   - text: the verdict and its sentence, each experiment with its table in
//     the 0-day layout (one column per build: base, changed, and for the
//     restore experiment changed+padding, as in the seed; lkp's fail:runs
//     row when a run failed), the layout
//     sweep's per-layout figures, the layout diff's suspects, notes and the
//     budget spent;
//   - markdown: the same for a pull-request comment;
//   - json: every figure, with the verdict's stable identifier;
//   - email: the shape of the 0-day robot's messages, the sentence that
//     says whether the change is real first.
func WriteTriage(w io.Writer, r *triage.Result, opt TriageOptions) error {
	if r == nil {
		return fmt.Errorf("report triage: no result")
	}
	switch opt.Format {
	case "", "text":
		return writeTriageText(w, r)
	case "markdown":
		return writeTriageMarkdown(w, r, opt)
	case "json":
		return writeTriageJSON(w, r)
	case "email":
		return writeTriageEmail(w, r, opt)
	}
	return fmt.Errorf("report: unknown triage format %q (valid: %s)", opt.Format, strings.Join(TriageFormats, ", "))
}

// triageExperimentNames are the experiments' headings.
var triageExperimentNames = map[string]string{
	"plain":            "plain comparison",
	"layout-sweep":     "layout sweep",
	"forced-alignment": "forced alignment",
	"restore":          "restore experiment",
}

func triageHeading(e triage.Experiment) string {
	if h, ok := triageExperimentNames[e.Name]; ok {
		return h
	}
	return e.Name
}

// triageEstimate formats an experiment's estimate: "+42.8% (99% CI +40.1%
// to +45.3%, p=0.006)".
func triageEstimate(change, lo, hi, p, conf float64) string {
	s := pct(change)
	if finite(lo) && finite(hi) && (lo != change || hi != change) {
		s += fmt.Sprintf(" (%s%% CI %s to %s", trimFloat(100*conf), pct(lo), pct(hi))
		if finite(p) {
			s += ", " + pValue(p)
		}
		s += ")"
	}
	return s
}

// triageBudget is the budget line.
func triageBudget(r *triage.Result) string {
	s := fmt.Sprintf("%d runs (%d new), %d builds (%d new), %s", r.Runs, r.NewRuns, r.Builds, r.NewBuilds, triageDuration(r.Wall.Seconds()))
	if r.FixedRuns > 0 {
		s += fmt.Sprintf("; measuring every build of a fixed design 10 times would take %d runs", r.FixedRuns)
	}
	return s
}

func triageDuration(sec float64) string {
	switch {
	case sec < 60:
		return fmt.Sprintf("%.1fs", sec)
	case sec < 3600:
		return fmt.Sprintf("%dm%02ds", int(sec)/60, int(sec)%60)
	}
	return fmt.Sprintf("%dh%02dm", int(sec)/3600, int(sec)%3600/60)
}

func triageBetter(b metric.Better) string {
	if b == metric.HigherIsBetter {
		return "higher is better"
	}
	return "lower is better"
}

func triageCommitLine(c gitrev.Commit) string {
	if c.Subject == "" {
		return c.Hash
	}
	return fmt.Sprintf("%s (%q)", c.Hash, c.Subject)
}

// writeTriageText is the text report.
func writeTriageText(w io.Writer, r *triage.Result) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "triage of %s on %s\n", r.Metric, r.Job)
	fmt.Fprintf(&b, "  base:    %s\n  changed: %s\n", triageCommitLine(r.Base), triageCommitLine(r.Changed))
	fmt.Fprintf(&b, "\nverdict: %s\n%s\n", r.Verdict, r.Sentence)
	if r.Disagreement != "" {
		fmt.Fprintf(&b, "plain vs layout-robust: %s\n", r.Disagreement)
	}
	for _, e := range r.Experiments {
		fmt.Fprintf(&b, "\n%s: %s\n", triageHeading(e), e.Title)
		fmt.Fprintf(&b, "  %s: %s\n", e.Outcome, e.Reason)
		if e.Name == "layout-sweep" {
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

// triageValue formats a median the way lkp prints values.
func triageValue(x float64) string {
	switch {
	case !finite(x):
		return nonFinite(x, false)
	case math.Abs(x) < 1000:
		return fmt.Sprintf("%.2f", x)
	case math.Abs(x) > 1e8:
		return fmt.Sprintf("%.4g", x)
	}
	return fmt.Sprintf("%d", int64(x))
}

func triageSuspectsText(b *bytes.Buffer, r *triage.Result) {
	if len(r.Suspects) == 0 && r.Padding == "" {
		return
	}
	b.WriteString("\nlayout suspects (perfbot layout diff, most likely first):\n")
	for i, s := range r.Suspects {
		fmt.Fprintf(b, "  %d. %s (%s in %s): offset %d -> %d mod 64; %s\n", i+1, s.Name, s.Kind, s.Section, s.OffBase, s.OffChanged, s.Why)
	}
	if r.Padding != "" {
		fmt.Fprintf(b, "restore padding: %s\n", triageFirstLine(r.Padding))
	}
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

// writeTriageMarkdown is the Markdown report.
func writeTriageMarkdown(w io.Writer, r *triage.Result, opt TriageOptions) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### perfbot triage: `%s` of %s\n\n", r.Verdict, code(gitrev.Short(r.Changed.Hash)))
	fmt.Fprintf(&b, "**%s**\n\n", triageMDEscape(r.Sentence))
	if r.Disagreement != "" {
		fmt.Fprintf(&b, "Plain vs layout-robust: %s.\n\n", triageMDEscape(r.Disagreement))
	}
	fmt.Fprintf(&b, "Metric %s (%s, %s), base %s, changed %s, knobs preset %s.\n",
		code(r.Metric), r.Unit, triageBetter(r.Better), code(gitrev.Short(r.Base.Hash)), code(gitrev.Short(r.Changed.Hash)), code(r.Preset))
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
		if e.Name == "layout-sweep" {
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

// Email: the 0-day robot's message, in its order.

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
		if e.Name == "layout-sweep" {
			b.WriteString("\n")
			triageLayoutsText(&b, e)
		}
		fmt.Fprintf(&b, "\n%s: %s\n", e.Outcome, e.Reason)
	}
	if len(r.Suspects) > 0 || r.Padding != "" {
		b.WriteString("\n=========================================================================================\n")
		triageSuspectsText(&b, r)
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

func triageSubject(v triage.Verdict) string {
	switch v {
	case triage.RealRegression:
		return "a real regression"
	case triage.RealImprovement:
		return "a real improvement"
	case triage.TextAlignment:
		return "text alignment artifact, not a real change"
	case triage.DataAlignment:
		return "data alignment artifact, not a real change"
	case triage.NoChange:
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

// JSON.

// triageJSON is the JSON form of a triage; field names are stable.
type triageJSON struct {
	Verdict      triage.Verdict    `json:"verdict"`
	Real         bool              `json:"real"`
	Sentence     string            `json:"sentence"`
	Metric       triageMetricJSON  `json:"metric"`
	Job          string            `json:"job"`
	Preset       string            `json:"preset"`
	Base         triageCommitJSON  `json:"base"`
	Changed      triageCommitJSON  `json:"changed"`
	Change       *float64          `json:"change"`
	Robust       *triageRobustJSON `json:"robust,omitempty"`
	Disagreement string            `json:"disagreement,omitempty"`
	Identical    bool              `json:"identical"`
	Experiments  []triageExpJSON   `json:"experiments"`
	Suspects     []triage.Suspect  `json:"suspects"`
	Padding      string            `json:"padding,omitempty"`
	Notes        []string          `json:"notes"`
	Budget       triageBudgetJSON  `json:"budget"`
	Resumed      bool              `json:"resumed"`
}

type triageMetricJSON struct {
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Better string `json:"better"`
}

type triageCommitJSON struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
}

type triageRobustJSON struct {
	Layouts            int      `json:"layouts"`
	Change             *float64 `json:"change"`
	Lo                 *float64 `json:"lo"`
	Hi                 *float64 `json:"hi"`
	P                  *float64 `json:"p"`
	Confidence         *float64 `json:"confidence"`
	Significant        bool     `json:"significant"`
	SensitivityBase    *float64 `json:"sensitivity_base"`
	SensitivityChanged *float64 `json:"sensitivity_changed"`
	LayoutP            *float64 `json:"layout_p"`
	WithinCV           *float64 `json:"within_cv"`
}

type triageExpJSON struct {
	Name       string             `json:"name"`
	Title      string             `json:"title"`
	Outcome    string             `json:"outcome"`
	Change     *float64           `json:"change"`
	Lo         *float64           `json:"lo"`
	Hi         *float64           `json:"hi"`
	P          *float64           `json:"p"`
	Confidence *float64           `json:"confidence"`
	Runs       int                `json:"runs"`
	Looks      int                `json:"looks"`
	Reason     string             `json:"reason"`
	Columns    []triageColumnJSON `json:"columns"`
	Layouts    []triageLayoutJSON `json:"layouts,omitempty"`
}

type triageColumnJSON struct {
	Label   string   `json:"label"`
	Commit  string   `json:"commit"`
	Variant string   `json:"variant"`
	N       int      `json:"n"`
	Failed  int      `json:"failed"`
	Median  *float64 `json:"median"`
	Change  *float64 `json:"change,omitempty"`
}

type triageLayoutJSON struct {
	Variant string   `json:"variant"`
	Base    *float64 `json:"base"`
	Changed *float64 `json:"changed"`
	Change  *float64 `json:"change"`
	N       int      `json:"n"`
}

type triageBudgetJSON struct {
	Runs        int     `json:"runs"`
	NewRuns     int     `json:"new_runs"`
	Builds      int     `json:"builds"`
	NewBuilds   int     `json:"new_builds"`
	FixedRuns   int     `json:"fixed_runs"`
	WallSeconds float64 `json:"wall_seconds"`
}

// triageNum is x, or nil (JSON null) when not finite.
func triageNum(x float64) *float64 {
	if !finite(x) {
		return nil
	}
	return &x
}

func writeTriageJSON(w io.Writer, r *triage.Result) error {
	out := triageJSON{
		Verdict: r.Verdict, Real: r.Verdict.Real(), Sentence: r.Sentence,
		Metric: triageMetricJSON{Name: r.Metric, Unit: r.Unit, Better: map[bool]string{true: "higher", false: "lower"}[r.Better == metric.HigherIsBetter]},
		Job:    r.Job, Preset: r.Preset,
		Base:    triageCommitJSON{r.Base.Hash, r.Base.Subject},
		Changed: triageCommitJSON{r.Changed.Hash, r.Changed.Subject},
		Change:  triageNum(r.Change), Disagreement: r.Disagreement, Identical: r.Identical,
		Experiments: []triageExpJSON{}, Suspects: r.Suspects, Padding: r.Padding, Notes: r.Notes,
		Budget: triageBudgetJSON{Runs: r.Runs, NewRuns: r.NewRuns, Builds: r.Builds, NewBuilds: r.NewBuilds,
			FixedRuns: r.FixedRuns, WallSeconds: math.Round(r.Wall.Seconds()*10) / 10},
		Resumed: r.Resumed,
	}
	if out.Suspects == nil {
		out.Suspects = []triage.Suspect{}
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	if rb := r.Robust; rb != nil {
		out.Robust = &triageRobustJSON{Layouts: rb.Layouts, Change: triageNum(rb.Change), Lo: triageNum(rb.Lo), Hi: triageNum(rb.Hi),
			P: triageNum(rb.P), Confidence: triageNum(rb.Confidence), Significant: rb.Significant,
			SensitivityBase: triageNum(rb.SensitivityBase), SensitivityChanged: triageNum(rb.SensitivityChanged),
			LayoutP: triageNum(rb.LayoutP), WithinCV: triageNum(rb.WithinCV)}
	}
	for _, e := range r.Experiments {
		je := triageExpJSON{Name: e.Name, Title: e.Title, Outcome: e.Outcome, Change: triageNum(e.Change), Lo: triageNum(e.Lo),
			Hi: triageNum(e.Hi), P: triageNum(e.P), Confidence: triageNum(e.Confidence), Runs: e.Runs, Looks: e.Looks, Reason: e.Reason,
			Columns: []triageColumnJSON{}}
		for i, c := range e.Columns {
			jc := triageColumnJSON{Label: c.Label, Commit: c.Commit, Variant: c.Variant, N: c.N, Failed: c.Failed, Median: triageNum(c.Median)}
			if i > 0 {
				jc.Change = triageNum(c.Change)
			}
			je.Columns = append(je.Columns, jc)
		}
		for _, l := range e.Layouts {
			je.Layouts = append(je.Layouts, triageLayoutJSON{Variant: l.Variant, Base: triageNum(l.Base), Changed: triageNum(l.Changed), Change: triageNum(l.Change), N: l.N})
		}
		out.Experiments = append(out.Experiments, je)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("report triage json: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}
