package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/perfbot/perfbot/internal/history"
)

// HistoryFormats are the formats of WriteHistory.
var HistoryFormats = []string{"text", "json", "csv"}

// HistoryMark is a change point or culprit shown beside a history.
type HistoryMark struct {
	Index   int    `json:"index"`   // the point that starts the change
	Culprit string `json:"culprit"` // its culprit, when found
	Verdict string `json:"verdict"` // the culprit's triage verdict
}

// WriteHistory writes a metric's history: one line per tested commit with
// its chained level, its median in its session and its step against the
// commit before it (interval and p), and the marks.
func WriteHistory(w io.Writer, s *history.Series, marks []HistoryMark, format string) error {
	mark := map[int]HistoryMark{}
	for _, m := range marks {
		mark[m.Index] = m
	}
	switch format {
	case "json":
		type point struct {
			history.Point
			Commit  string       `json:"commit"`
			Subject string       `json:"subject"`
			Mark    *HistoryMark `json:"mark,omitempty"`
		}
		doc := struct {
			Metric string  `json:"metric"`
			Unit   string  `json:"unit"`
			Points []point `json:"points"`
		}{Metric: s.Metric, Unit: s.Unit}
		for i, p := range s.Points {
			pt := point{Point: p, Commit: p.Commit.Hash, Subject: p.Commit.Subject}
			if m, ok := mark[i]; ok {
				pt.Mark = &m
			}
			doc.Points = append(doc.Points, pt)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"commit", "subject", "level", "median", "step_pct", "step_lo", "step_hi", "p", "ref", "change", "culprit", "verdict"})
		for i, p := range s.Points {
			m, ok := mark[i]
			_ = cw.Write([]string{p.Commit.Hash, p.Commit.Subject, f(p.Level), f(p.Median), f(p.Step), f(p.Lo), f(p.Hi), f(p.P),
				p.Ref, strconv.FormatBool(ok), m.Culprit, m.Verdict})
		}
		cw.Flush()
		return cw.Error()
	case "", "text":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "commit\tlevel\tmedian\tstep\tp\t%s\n", s.Metric)
		for i, p := range s.Points {
			step := "-"
			if p.Ref != "" && !p.NewChain {
				step = fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%]", p.Step, p.Lo, p.Hi)
			}
			note := p.Commit.Subject
			if m, ok := mark[i]; ok {
				note = fmt.Sprintf("<- change: culprit %s %s; %s", m.Culprit, m.Verdict, note)
			}
			fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%s\t%.3g\t%s\n", p.Commit.Short(), p.Level, p.Median, step, p.P, note)
		}
		return tw.Flush()
	}
	return fmt.Errorf("history: unknown format %q (valid: text, json, csv)", format)
}

func f(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
