package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/qualify"
	"github.com/perfbot/perfbot/internal/report/doc"
)

// WriteQualify writes a runner's qualification (perfbot qualify) in one
// of QualifyFormats. The first line of text and markdown is the verdict.
func WriteQualify(w io.Writer, r *qualify.Result, format Format) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(QualifyDoc(r))
	case FormatText, "":
		return qualifyText(w, r, false)
	case FormatMarkdown:
		return qualifyText(w, r, true)
	}
	return CheckFormat(format, QualifyFormats)
}

// QualifySentence is the one-line verdict.
func QualifySentence(r *qualify.Result) string {
	state := "runner qualified"
	if !r.Fit {
		state = "runner not fit for the gate"
	}
	s := fmt.Sprintf("%s: false positives %d/%d (%.1f %% [%.1f %%, %.1f %%]) at alpha %g", state, r.FalsePositives, r.Gates,
		100*r.Rate(), 100*r.FPLo, 100*r.FPHi, r.Alpha)
	var ds []string
	for _, m := range r.Metrics {
		ds = append(ds, fmt.Sprintf("%s %s", m.Name, qpct(m.DetectablePct)))
	}
	return s + "; detectable " + strings.Join(ds, ", ")
}

func qpct(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.3g %%", x)
}

func qualifyText(w io.Writer, r *qualify.Result, md bool) error {
	b := &strings.Builder{}
	head, li := "", "  "
	if md {
		head, li = "### ", "- "
	}
	fmt.Fprintln(b, QualifySentence(r))
	fmt.Fprintln(b)
	fmt.Fprintf(b, "%sRunner\n", head)
	fmt.Fprintf(b, "%s%s: %s, %s, %d CPUs, %s; load average %.2f at the start, %.2f at the end\n", li, r.Runner.Hostname, r.Runner.CPUModel, r.Runner.Kernel, r.Runner.NProc, pinned(r.CPU), r.LoadStart, r.LoadEnd)
	fmt.Fprintf(b, "%sjob %s at %s: %d runs of the plain build (%d failed), %d A/A pairs; %s\n", li, r.Job, r.Commit.Short(), r.Runs, r.Failed, r.Pairs, r.Finished.Sub(r.Started).Round(time.Second))
	if r.TimeUp {
		fmt.Fprintf(b, "%sthe time budget ended the measuring before the most runs\n", li)
	}
	fmt.Fprintln(b)
	fmt.Fprintf(b, "%sA/A gates (the same build on both sides, resampled pairs, %s)\n", head, r.Budget)
	fmt.Fprintf(b, "%s%d of %d failed, %d inconclusive, %.1f pairs on average before deciding\n", li, r.FalsePositives, r.Gates, r.Undecided, r.MeanPairs)
	fmt.Fprintln(b)
	fmt.Fprintf(b, "%sMetrics\n", head)
	if md {
		fmt.Fprintln(b, "| metric | threshold | noise | detectable at 80 % | gate's formula |")
		fmt.Fprintln(b, "|---|---|---|---|---|")
		for _, m := range r.Metrics {
			fmt.Fprintf(b, "| %s | %.3g %% | %s | %s | %s |\n", m.Name, m.ThresholdPct, qpct(m.NoisePct), qpct(m.DetectablePct), qpct(m.FormulaPct))
		}
	} else {
		for _, m := range r.Metrics {
			fmt.Fprintf(b, "%s%s: threshold %.3g %%, noise %s, detectable at 80 %% power %s (the gate's formula: %s)\n", li, m.Name, m.ThresholdPct, qpct(m.NoisePct), qpct(m.DetectablePct), qpct(m.FormulaPct))
		}
	}
	if s := r.Slowdown; s != nil {
		fmt.Fprintln(b)
		fmt.Fprintf(b, "%sPlanted slowdown %s\n", head, s.Name)
		if s.Gates == 0 {
			fmt.Fprintf(b, "%s%d rounds beside the plain build, too few to resample\n", li, s.Rounds)
		} else {
			var sz []string
			for _, z := range s.Sizes {
				sz = append(sz, fmt.Sprintf("%s %+.2f %% [%+.2f %%, %+.2f %%]", z.Metric, z.Change, z.Lo, z.Hi))
			}
			fmt.Fprintf(b, "%smeasured over %d rounds: %s\n", li, s.Rounds, strings.Join(sz, ", "))
			fmt.Fprintf(b, "%sthe gate failed on it in %d of %d resampled gates (%.0f %%)\n", li, s.Detected, s.Gates, 100*float64(s.Detected)/float64(s.Gates))
		}
	}
	if len(r.Advice) > 0 {
		fmt.Fprintln(b)
		fmt.Fprintf(b, "%sWhat to do\n", head)
		for _, a := range r.Advice {
			fmt.Fprintf(b, "%s%s\n", li, a)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pinned(cpu int) string {
	if cpu < 0 {
		return "runs not pinned"
	}
	return fmt.Sprintf("runs pinned to CPU %d", cpu)
}

// QualifyDoc is the JSON document of a qualification.
func QualifyDoc(r *qualify.Result) doc.Qualify {
	d := doc.Qualify{Version: doc.QualifyVersion, Sentence: QualifySentence(r), Fit: r.Fit, Job: r.Job, Commit: r.Commit.Hash,
		Runner: doc.QualifyRunner{Hostname: r.Runner.Hostname, CPUModel: r.Runner.CPUModel, Kernel: r.Runner.Kernel, NProc: r.Runner.NProc,
			CPU: r.CPU, LoadStart: r.LoadStart, LoadEnd: r.LoadEnd},
		Alpha: r.Alpha, Runs: r.Runs, Failed: r.Failed, Pairs: r.Pairs, Budget: doc.QualifyBudget{Pairs: r.BudgetPairs, Why: r.Budget},
		AA:      doc.QualifyAA{Gates: r.Gates, FalsePositives: r.FalsePositives, Undecided: r.Undecided, Rate: r.Rate(), Lo: r.FPLo, Hi: r.FPHi, MeanPairs: r.MeanPairs},
		Metrics: []doc.QualifyMetric{}, Advice: append([]string{}, r.Advice...), TimeUp: r.TimeUp,
		Started: r.Started.UTC().Format(time.RFC3339), Finished: r.Finished.UTC().Format(time.RFC3339), Seed: r.Seed}
	for _, m := range r.Metrics {
		d.Metrics = append(d.Metrics, doc.QualifyMetric{Name: m.Name, Better: m.Better.String(), ThresholdPct: m.ThresholdPct,
			NoisePct: doc.Float(m.NoisePct), DetectablePct: doc.Float(m.DetectablePct), FormulaPct: doc.Float(m.FormulaPct)})
	}
	if s := r.Slowdown; s != nil {
		d.Slowdown = &doc.QualifySlow{Name: s.Name, Rounds: s.Rounds, Sizes: []doc.QualifySize{}, Gates: s.Gates, Detected: s.Detected}
		for _, z := range s.Sizes {
			d.Slowdown.Sizes = append(d.Slowdown.Sizes, doc.QualifySize{Metric: z.Metric, Change: doc.Float(z.Change), Lo: doc.Float(z.Lo), Hi: doc.Float(z.Hi)})
		}
	}
	return d
}
