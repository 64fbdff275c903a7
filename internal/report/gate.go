// The report of a pull-request gate (perfbot gate): text, Markdown for a
// step summary or a PR comment, and JSON (gatejson.go). Every format's
// human output starts with the gate's one-line verdict.

package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perfbot/perfbot/internal/gate"
	"github.com/perfbot/perfbot/internal/gitrev"
)

// WriteGate writes the gate's report in format f (one of GateFormats).
func WriteGate(w io.Writer, r *gate.Result, f Format) error {
	var b bytes.Buffer
	switch f {
	case FormatText:
		writeGateText(&b, r)
	case FormatMarkdown:
		writeGateMarkdown(&b, r)
	case FormatJSON:
		if err := writeGateJSON(&b, r); err != nil {
			return err
		}
	case FormatBMF:
		if err := writeGateBMF(&b, r); err != nil {
			return err
		}
	default:
		return CheckFormat(f, GateFormats)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func writeGateText(b *bytes.Buffer, r *gate.Result) {
	fmt.Fprintf(b, "%s\n\n", r.Line())
	fmt.Fprintf(b, "job %s: base %s -> head %s\n", r.Job, commitText(r.Base), commitText(r.Head))
	if len(r.Metrics) > 0 {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "metric\tbase\thead\tchange\tinterval\tthreshold\tdetectable\tcall")
		for _, m := range r.Metrics {
			name, thr := m.Metric, gate.Pct0(m.ThresholdPct)
			if !m.Gated {
				thr = "(shown)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t[%s, %s]\t%s\t%s\t%s\n", name, value(m.BaseMedian, m.Unit), value(m.HeadMedian, m.Unit),
				gate.Pct(m.Change), gate.Pct(m.Lo), gate.Pct(m.Hi), thr, gate.Pct0(m.DetectablePct), callWord(m))
		}
		tw.Flush()
	}
	if t := r.Triage; t != nil {
		b.WriteString("\n")
		writeTriageSummary(b, t, "")
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "runs: %s\n", gateRuns(r))
	fmt.Fprintf(b, "runner: %s\n", runnerText(r))
	if q := r.Qualification; q != nil {
		fmt.Fprintf(b, "qualification: %s\n", qualText(q))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(b, "note: %s\n", n)
	}
}

func writeGateMarkdown(b *bytes.Buffer, r *gate.Result) {
	fmt.Fprintf(b, "**%s**\n\n", mdEscape(r.Line()))
	fmt.Fprintf(b, "perfbot gate, job `%s`: base %s → head %s\n\n", r.Job, mdCommit(r.Base), mdCommit(r.Head))
	if len(r.Metrics) > 0 {
		b.WriteString("| metric | base | head | change | interval | threshold | smallest detectable | call |\n")
		b.WriteString("|---|---:|---:|---:|---|---:|---:|---|\n")
		for _, m := range r.Metrics {
			thr := gate.Pct0(m.ThresholdPct)
			if !m.Gated {
				thr = "shown, not gated"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | [%s, %s] | %s | %s | %s |\n", code(m.Metric), value(m.BaseMedian, m.Unit), value(m.HeadMedian, m.Unit),
				gate.Pct(m.Change), gate.Pct(m.Lo), gate.Pct(m.Hi), thr, gate.Pct0(m.DetectablePct), callWord(m))
		}
		b.WriteString("\n")
	}
	if t := r.Triage; t != nil {
		writeTriageSummary(b, t, "- ")
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "Runs: %s.  \nRunner: %s.\n", gateRuns(r), mdEscape(runnerText(r)))
	if q := r.Qualification; q != nil {
		fmt.Fprintf(b, "  \nQualification: %s.\n", mdEscape(qualText(q)))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(b, "\n> %s\n", mdEscape(n))
	}
}

func writeTriageSummary(b *bytes.Buffer, t *gate.Triage, bullet string) {
	switch {
	case t.Err != "":
		fmt.Fprintf(b, "triage of %s: not finished: %s\n", t.Metric, t.Err)
		return
	default:
		fmt.Fprintf(b, "triage of %s: %s (%d runs, %s): %s\n", t.Metric, t.Verdict.Word(), t.Runs, t.Wall.Round(100*time.Millisecond), t.Sentence)
	}
	if bullet != "" && len(t.Evidence) > 0 {
		b.WriteString("\n")
	}
	for _, e := range t.Evidence {
		if bullet == "" {
			fmt.Fprintf(b, "  %s\n", e)
		} else {
			fmt.Fprintf(b, "%s%s\n", bullet, mdEscape(e))
		}
	}
}

func callWord(m gate.Metric) string {
	switch {
	case m.Call == gate.Regressed && m.Gated:
		return "REGRESSION"
	case m.Call == gate.Regressed:
		return "worse"
	case m.Improved():
		return "better"
	case m.Call == gate.Within:
		return "within"
	}
	return "undecided"
}

func gateRuns(r *gate.Result) string {
	if r.Looks == 0 {
		return fmt.Sprintf("none (%s)", r.Wall.Round(100*time.Millisecond))
	}
	looks := make([]string, len(r.Planned))
	for i, l := range r.Planned {
		looks[i] = fmt.Sprint(l)
	}
	return fmt.Sprintf("%d of each revision (%d new) at look %d of %s; alpha %.3g over all metrics and looks; %s wall time of at most %s",
		r.Pairs, r.NewRuns, r.Looks, strings.Join(looks, ", "), r.Alpha, r.Wall.Round(100*time.Millisecond), r.MaxTime)
}

func runnerText(r *gate.Result) string {
	u := r.Runner
	var parts []string
	if u.Machine != "" {
		parts = append(parts, u.Machine)
	}
	if u.CPUModel != "" || u.CPUs > 0 {
		parts = append(parts, strings.TrimSpace(fmt.Sprintf("%d CPUs %s", u.CPUs, u.CPUModel)))
	}
	if u.Kernel != "" {
		parts = append(parts, u.Kernel)
	}
	if !math.IsNaN(u.Load) {
		parts = append(parts, fmt.Sprintf("load %.2f", u.Load))
	}
	if u.Pinned >= 0 {
		parts = append(parts, fmt.Sprintf("runs pinned to CPU %d", u.Pinned))
	}
	if r.Qualification == nil && r.Looks > 0 {
		parts = append(parts, "not qualified (perfbot qualify)")
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, ", ")
}

func qualText(q *gate.Qualification) string {
	fit := "fit for the gate"
	if !q.Fit {
		fit = "NOT fit for the gate"
	}
	return fmt.Sprintf("%s on %s: false-positive rate %.3g over %d A/A gates", fit, q.When.Format(time.DateOnly), q.FalsePositiveRate, q.Gates)
}

func commitText(c gitrev.Commit) string {
	if c.Subject == "" {
		return c.Short()
	}
	return fmt.Sprintf("%s (%s)", c.Short(), c.Subject)
}

func mdCommit(c gitrev.Commit) string {
	if c.Subject == "" {
		return code(c.Short())
	}
	return fmt.Sprintf("%s (%s)", code(c.Short()), mdEscape(c.Subject))
}

// value writes a median with its unit; "" for NaN.
func value(x float64, unit string) string {
	if math.IsNaN(x) {
		return ""
	}
	s := fmt.Sprintf("%.4g", x)
	if unit != "" {
		s += " " + unit
	}
	return s
}
