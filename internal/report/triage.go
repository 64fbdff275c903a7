package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/triage"
)

// TriageOptions selects how WriteTriage prints a triage.
type TriageOptions struct {
	// Format is one of TriageFormats; "" means "text".
	Format Format
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
	return fmt.Errorf("report: unknown triage format %q (valid: %s)", opt.Format, JoinFormats(TriageFormats))
}

// triageExperimentNames are the experiments' headings.
var triageExperimentNames = map[triage.ExperimentName]string{
	triage.PlainExperiment:   "plain comparison",
	triage.SweepExperiment:   "layout sweep",
	triage.ForcedExperiment:  "forced alignment",
	triage.RestoreExperiment: "restore experiment",
}

func triageHeading(e triage.Experiment) string {
	if h, ok := triageExperimentNames[e.Name]; ok {
		return h
	}
	return string(e.Name)
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

// triageDecidedBy lists the experiments the verdict rests on, by their
// headings ("" when none).
func triageDecidedBy(r *triage.Result) string {
	var names []string
	for _, n := range r.DecidedBy {
		names = append(names, triageHeading(triage.Experiment{Name: n}))
	}
	return strings.Join(names, ", ")
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
