// Package finding is what perfbot watch reports: one finding per culprit
// commit, with every job and metric the culprit moved, the triage verdict
// and its evidence, and how to reproduce it. Findings are stored as JSON
// in the results store (one source of truth, which the dashboard reads)
// and exported by package report.
package finding

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/perfbot/perfbot/internal/verdict"
)

// Finding is one culprit and what it changed.
type Finding struct {
	Culprit string `json:"culprit"` // full hash
	Subject string `json:"subject"`
	Author  string `json:"author"` // "Name <email>"
	Parent  string `json:"parent"` // full hash of the commit it is compared with
	Branch  string `json:"branch"`
	Repo    string `json:"repo"`
	// The main metric: the first one found.
	Job      string          `json:"job"`
	Metric   string          `json:"metric"`
	Change   float64         `json:"change"` // percent
	Verdict  verdict.Verdict `json:"verdict"`
	Sentence string          `json:"sentence"`
	// Metrics lists every job and metric the culprit moved, the main one
	// first.
	Metrics []MetricChange `json:"metrics"`
	// Params are the job's parameters.
	Params map[string]string `json:"params,omitempty"`
	// Table is the 0-day comparison table of parent and culprit; Triage
	// the triage report (text); Bisect how the culprit was found.
	Table     string    `json:"table"`
	Triage    string    `json:"triage"`
	Bisect    string    `json:"bisect,omitempty"`
	Reproduce []string  `json:"reproduce"`
	Found     time.Time `json:"found"`
	// LayoutCause names the layout change triage's layout diff ranks
	// first ("text_kernel in .text"): findings of different culprits with
	// the same cause are one alignment story, and are listed together.
	LayoutCause string `json:"layout_cause,omitempty"`
	// TriageReport is the triage's JSON report (report.WriteTriage's json
	// format: experiments with their runs' values, suspects, padding),
	// which the dashboard draws; BisectKey names the bisection's state in
	// the store (kind "bisect"), with its steps, when the culprit was
	// bisected.
	TriageReport json.RawMessage `json:"triage_report,omitempty"`
	BisectKey    string          `json:"bisect_key,omitempty"`
	// Skipped are the commits between Parent and Culprit that do not
	// build (full hashes, oldest first): the change is in one of them or
	// in Culprit, the first commit after them that builds.
	Skipped []string `json:"skipped,omitempty"`
}

// MetricChange is one metric the culprit moved.
type MetricChange struct {
	Job     string          `json:"job"`
	Metric  string          `json:"metric"`
	Change  float64         `json:"change"`
	Better  string          `json:"better,omitempty"` // "lower" or "higher"
	Verdict verdict.Verdict `json:"verdict"`
}

// Kind is what a finding is, for a subject line and for report policy.
type Kind string

// The kinds of findings.
const (
	Regression  Kind = "regression"
	Improvement Kind = "improvement"
	Artifact    Kind = "alignment artifact"
	NoChange    Kind = "no change"
	Unclear     Kind = "inconclusive change"
)

// Kind classifies the finding by its main verdict.
func (f *Finding) Kind() Kind {
	switch v := f.Verdict; {
	case v.IsRegression():
		return Regression
	case v.IsImprovement():
		return Improvement
	case v.IsArtifact():
		return Artifact
	case v.IsNoChange():
		return NoChange
	}
	return Unclear
}

// Reported says whether a report policy ("regressions", "changes", "all")
// asks for this finding to be told.
func (f *Finding) Reported(policy string) bool {
	switch policy {
	case "all":
		return true
	case "changes":
		return f.Kind() == Regression || f.Kind() == Improvement
	}
	return f.Kind() == Regression
}

// Merge adds the metrics of g (the same culprit seen by another job or
// metric) to f, one entry per job and metric.
func (f *Finding) Merge(g *Finding) {
	for _, m := range g.Metrics {
		if !slices.ContainsFunc(f.Metrics, func(x MetricChange) bool { return x.Job == m.Job && x.Metric == m.Metric }) {
			f.Metrics = append(f.Metrics, m)
		}
	}
	// A real regression outranks what was found before, and its metric
	// goes first in the list.
	if g.Kind() == Regression && f.Kind() != Regression {
		f.Job, f.Metric, f.Change, f.Verdict, f.Sentence, f.Table, f.Triage = g.Job, g.Metric, g.Change, g.Verdict, g.Sentence, g.Table, g.Triage
		f.Parent, f.Bisect, f.Reproduce, f.LayoutCause = g.Parent, g.Bisect, g.Reproduce, g.LayoutCause
		f.TriageReport, f.BisectKey = g.TriageReport, g.BisectKey
		if i := slices.IndexFunc(f.Metrics, func(m MetricChange) bool { return m.Job == g.Job && m.Metric == g.Metric }); i > 0 {
			main := f.Metrics[i]
			f.Metrics = append([]MetricChange{main}, slices.Delete(f.Metrics, i, i+1)...)
		}
	}
}

// Decode reads a stored finding.
func Decode(data []byte) (*Finding, error) {
	var f Finding
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("stored finding: %w", err)
	}
	return &f, nil
}

// MessageID is the Message-ID of a finding's mail: one per culprit, so
// that a mail sent again is recognisably the same.
func (f *Finding) MessageID() string {
	return fmt.Sprintf("<perfbot.%s@perfbot.invalid>", f.Culprit)
}

// GroupByCause orders findings (given newest first) so that those sharing
// a layout cause follow the newest of them: the indices into fs, in
// listing order.
func GroupByCause(fs []*Finding) []int {
	var order []int
	done := make([]bool, len(fs))
	for i, f := range fs {
		if done[i] {
			continue
		}
		order = append(order, i)
		done[i] = true
		if f.LayoutCause == "" {
			continue
		}
		for k := i + 1; k < len(fs); k++ {
			if !done[k] && fs[k].LayoutCause == f.LayoutCause {
				order = append(order, k)
				done[k] = true
			}
		}
	}
	return order
}
