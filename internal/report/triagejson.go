// The JSON report of a triage: a doc.Triage.

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/report/doc"
	"github.com/perfbot/perfbot/internal/triage"
)

func writeTriageJSON(w io.Writer, r *triage.Result) error {
	out := doc.Triage{
		Version: doc.TriageVersion,
		Verdict: r.Verdict, Real: r.Verdict.IsReal(), Sentence: r.Sentence,
		Metric: doc.TriageMetric{Name: r.Metric, Unit: r.Unit, Better: map[bool]string{true: "higher", false: "lower"}[r.Better == metric.HigherIsBetter]},
		Job:    r.Job, Preset: r.Preset,
		Base:    doc.TriageCommit{Commit: r.Base.Hash, Subject: r.Base.Subject},
		Changed: doc.TriageCommit{Commit: r.Changed.Hash, Subject: r.Changed.Subject},
		Change:  doc.Float(r.Change), Disagreement: r.Disagreement, Identical: r.Identical,
		Experiments: []doc.TriageExperiment{}, Suspects: []doc.Suspect{}, Padding: r.Padding, Notes: r.Notes,
		Budget: doc.TriageBudget{Runs: r.Runs, NewRuns: r.NewRuns, Builds: r.Builds, NewBuilds: r.NewBuilds,
			FixedRuns: r.FixedRuns, WallSeconds: math.Round(r.Wall.Seconds()*10) / 10},
		Resumed: r.Resumed,
	}
	if sp := r.SourcePatch; sp != nil {
		out.SourcePatch = &doc.TriagePatch{Root: sp.Root, Suspect: sp.Suspect, File: sp.File, Line: sp.Line, Section: sp.Section,
			Bytes: sp.Bytes, Align: sp.Align, Exact: sp.Exact, Check: sp.Check, Restored: sp.Restored, Identical: sp.Identical, Notes: append([]string{}, sp.Notes...), Diff: sp.Diff}
	}
	if ev := r.Instructions; ev != nil {
		out.Instructions = &doc.TriageInstructions{Metric: ev.Metric, Base: ev.Base, Changed: ev.Changed,
			Change: doc.Float(ev.ChangePct), MetricChange: doc.Float(ev.MetricPct), Supports: string(ev.Supports), Text: ev.Text}
	}
	out.DecidedBy = []string{}
	for _, n := range r.DecidedBy {
		out.DecidedBy = append(out.DecidedBy, string(n))
	}
	for _, sp := range r.Suspects {
		out.Suspects = append(out.Suspects, doc.Suspect{Name: sp.Name, Kind: string(sp.Kind), Section: sp.Section,
			OffsetBefore: sp.OffBase, OffsetAfter: sp.OffChanged, Why: sp.Why})
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	if rb := r.Robust; rb != nil {
		out.Robust = &doc.TriageRobust{Layouts: rb.Layouts, Change: doc.Float(rb.Change), Lo: doc.Float(rb.Lo), Hi: doc.Float(rb.Hi),
			P: doc.Float(rb.P), Confidence: doc.Float(rb.Confidence), Significant: rb.Significant,
			SensitivityBase: doc.Float(rb.SensitivityBase), SensitivityChanged: doc.Float(rb.SensitivityChanged),
			LayoutP: doc.Float(rb.LayoutP), WithinCV: doc.Float(rb.WithinCV)}
	}
	for _, e := range r.Experiments {
		je := doc.TriageExperiment{Name: string(e.Name), Title: e.Title, Outcome: string(e.Outcome), Change: doc.Float(e.Change), Lo: doc.Float(e.Lo),
			Hi: doc.Float(e.Hi), P: doc.Float(e.P), Confidence: doc.Float(e.Confidence), Runs: e.Runs, Looks: e.Looks, Reason: e.Reason,
			Columns: []doc.TriageColumn{}}
		for i, c := range e.Columns {
			jc := doc.TriageColumn{Label: c.Label, Commit: c.Commit, Variant: c.Variant, N: c.N, Failed: c.Failed, Median: doc.Float(c.Median),
				Values: doc.FiniteValues(c.Values)}
			if i > 0 {
				jc.Change = doc.Float(c.Change)
			}
			je.Columns = append(je.Columns, jc)
		}
		for _, l := range e.Layouts {
			je.Layouts = append(je.Layouts, doc.TriageLayout{Variant: l.Variant, Base: doc.Float(l.Base), Changed: doc.Float(l.Changed), Change: doc.Float(l.Change), N: l.N,
				BaseValues: doc.FiniteValues(l.BaseValues), ChangedValues: doc.FiniteValues(l.ChangedValues)})
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
