package watch

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/verdict"
)

// mailSummary is what one revision of a finding's mail says.
type mailSummary struct {
	Verdict     verdict.Verdict `json:"verdict"`
	Metrics     []metricSum     `json:"metrics"`
	Withdrawn   bool            `json:"withdrawn,omitempty"`
	RecoveredBy string          `json:"recovered_by,omitempty"`
	Note        string          `json:"note,omitempty"` // what changed since the previous revision; not compared
}

type metricSum struct {
	Job     string          `json:"job"`
	Metric  string          `json:"metric"`
	Verdict verdict.Verdict `json:"verdict"`
}

// same says whether two revisions say the same (their notes aside).
func (s mailSummary) same(t mailSummary) bool {
	s.Note, t.Note = "", ""
	a, _ := json.Marshal(s)
	b, _ := json.Marshal(t)
	return string(a) == string(b)
}

// summarize is what f's mail would say now, among all the store's
// findings (to see a later one that recovers it); note is set to the
// recovery, for a first mail.
func summarize(f *finding.Finding, rec *store.FindingRecord, all []*finding.Finding) mailSummary {
	s := mailSummary{Verdict: f.Verdict, Withdrawn: rec.Withdrawn}
	for _, m := range f.Metrics {
		s.Metrics = append(s.Metrics, metricSum{m.Job, m.Metric, m.Verdict})
	}
	slices.SortFunc(s.Metrics, func(a, b metricSum) int { return strings.Compare(a.Job+"\x00"+a.Metric, b.Job+"\x00"+b.Metric) })
	if g, m := recoveredBy(f, all); g != nil {
		s.RecoveredBy = g.Culprit
		s.Note = fmt.Sprintf("recovered: the later commit %s (%q) moves %s by %+.1f%%, undoing at least half of this %+.1f%%",
			gitrev.Short(g.Culprit), g.Subject, m.Metric, m.Change, f.Change)
	}
	return s
}

// recoveredBy is the first finding after f on f's branch that moves f's
// main metric the other way by at least half of f's step (in log terms):
// a fix or a revert. Findings are ordered by when they were found.
func recoveredBy(f *finding.Finding, all []*finding.Finding) (*finding.Finding, *finding.MetricChange) {
	step := math.Abs(math.Log1p(f.Change / 100))
	if f.Change == 0 || math.IsNaN(step) {
		return nil, nil
	}
	var best *finding.Finding
	var bestM *finding.MetricChange
	for _, g := range all {
		if g.Culprit == f.Culprit || g.Branch != f.Branch || !g.Found.After(f.Found) || (best != nil && !g.Found.Before(best.Found)) {
			continue
		}
		for i, m := range g.Metrics {
			if m.Job == f.Job && m.Metric == f.Metric && !m.Verdict.IsNoChange() && m.Change*f.Change < 0 &&
				math.Abs(math.Log1p(m.Change/100)) >= step/2 {
				best, bestM = g, &g.Metrics[i]
				break
			}
		}
	}
	return best, bestM
}

// changeNote says what changed from revision old to now.
func changeNote(old, now mailSummary, f *finding.Finding) string {
	var parts []string
	if old.Verdict != now.Verdict {
		parts = append(parts, fmt.Sprintf("the verdict is now %s (it was %s)", now.Verdict, old.Verdict))
	}
	for _, m := range now.Metrics {
		i := slices.IndexFunc(old.Metrics, func(o metricSum) bool { return o.Job == m.Job && o.Metric == m.Metric })
		switch {
		case i < 0:
			change := 0.0
			if k := slices.IndexFunc(f.Metrics, func(x finding.MetricChange) bool { return x.Job == m.Job && x.Metric == m.Metric }); k >= 0 {
				change = f.Metrics[k].Change
			}
			parts = append(parts, fmt.Sprintf("it also moves %s %s by %+.1f%% (%s)", m.Job, m.Metric, change, m.Verdict))
		case old.Metrics[i].Verdict != m.Verdict:
			parts = append(parts, fmt.Sprintf("%s %s is now %s (it was %s)", m.Job, m.Metric, m.Verdict, old.Metrics[i].Verdict))
		}
	}
	switch {
	case now.Withdrawn && !old.Withdrawn:
		parts = append(parts, "withdrawn: the commit is no longer on the watched branches (a force-push or a rebase dropped it)")
	case old.Withdrawn && !now.Withdrawn:
		parts = append(parts, "the commit is back on the watched branches")
	}
	if now.RecoveredBy != "" && now.RecoveredBy != old.RecoveredBy {
		parts = append(parts, now.Note)
	}
	if len(parts) == 0 {
		return "the finding changed"
	}
	return strings.Join(parts, "; ")
}
