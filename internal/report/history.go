package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/perfbot/perfbot/internal/plot"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/report/doc"
	"github.com/perfbot/perfbot/internal/verdict"
)

// HistoryOptions say how to write a history and what it is a history
// of, beyond what the series holds.
type HistoryOptions struct {
	Format  Format // one of HistoryFormats; "" means FormatText
	JobName string // the job's name (the series holds its key)
	History string // plain or forced
	Branch  string // the branch whose first-parent commits it follows
}

// WriteHistory writes a metric's history: per tested commit (oldest
// first) its chained level, its median in its own session with the
// median's interval, and its step against the commit before it (interval
// and p), and the change points watch handled with their culprits and
// verdicts (s.Changes). docs/watch.md documents the JSON.
func WriteHistory(w io.Writer, s *history.Series, opt HistoryOptions) error {
	change := map[int]history.Change{}
	for _, c := range s.Changes {
		change[c.Index] = c
	}
	switch opt.Format {
	case "svg":
		// The dashboard's figure, standalone: the median per tested
		// commit with its interval band, the changes with their culprits
		// and verdicts.
		return plot.History(w, s, plot.HistoryOptions{Standalone: true})
	case "json":
		return writeHistoryJSON(w, s, opt)
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"commit", "subject", "level", "median", "median_lo", "median_hi", "runs", "step_pct", "step_lo", "step_hi", "p",
			"ref", "new_chain", "change", "culprits", "verdicts", "ratio", "ratio_lo", "ratio_hi"})
		for i, p := range s.Points {
			c, ok := change[i]
			var hashes, verdicts []string
			for _, cu := range c.Culprits {
				hashes, verdicts = append(hashes, cu.Commit), append(verdicts, string(cu.Verdict))
			}
			step, lo, hi, pv := "", "", "", ""
			if hasStep(p) {
				step, lo, hi, pv = f(p.Step), f(p.Lo), f(p.Hi), f(p.P)
			}
			ratio, rlo, rhi := "", "", ""
			if p.Ratio > 0 {
				ratio, rlo, rhi = f(p.Ratio), f(p.RatioLo), f(p.RatioHi)
			}
			_ = cw.Write([]string{p.Commit.Hash, p.Commit.Subject, f(p.Level), f(p.Median), f(p.MedianLo), f(p.MedianHi), strconv.Itoa(p.Runs),
				step, lo, hi, pv, p.Ref, strconv.FormatBool(p.NewChain), strconv.FormatBool(ok), strings.Join(hashes, " "), strings.Join(verdicts, " "),
				ratio, rlo, rhi})
		}
		cw.Flush()
		return cw.Error()
	case "", "text":
		fmt.Fprintln(w, historyTitle(s, opt))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		ratios := slices.ContainsFunc(s.Points, func(p history.Point) bool { return p.Ratio > 0 })
		head := "commit\tlevel\tmedian [interval]\tstep [interval]\tp\t"
		if ratios {
			head += "ratio to anchor\t"
		}
		fmt.Fprintln(tw, head+"change, subject")
		for i, p := range s.Points {
			step, pv := "-", "-"
			switch {
			case p.NewChain:
				step = "new chain"
			case hasStep(p):
				step, pv = fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%]", p.Step, p.Lo, p.Hi), fmt.Sprintf("%.3g", p.P)
			}
			note := p.Commit.Subject
			if c, ok := change[i]; ok {
				note = changeNote(c) + "; " + note
			}
			fmt.Fprintf(tw, "%s\t%.4g\t%.4g [%.4g, %.4g]\t%s\t%s\t", p.Commit.Short(), p.Level, p.Median, p.MedianLo, p.MedianHi, step, pv)
			switch {
			case !ratios:
			case p.Ratio > 0 && p.RatioHi > 0:
				fmt.Fprintf(tw, "%.4g [%.4g, %.4g]\t", p.Ratio, p.RatioLo, p.RatioHi)
			case p.Ratio > 0:
				fmt.Fprintf(tw, "%.4g\t", p.Ratio)
			default:
				fmt.Fprint(tw, "-\t")
			}
			fmt.Fprintln(tw, note)
		}
		return tw.Flush()
	}
	return fmt.Errorf("history: unknown format %q (valid: %s)", opt.Format, JoinFormats(HistoryFormats))
}

// hasStep says whether the point was measured against its predecessor
// (or its reference) in one session.
func hasStep(p history.Point) bool { return p.Ref != "" && !p.NewChain }

func historyTitle(s *history.Series, opt HistoryOptions) string {
	t := "metric " + s.Metric
	var about []string
	if s.Unit != "" {
		about = append(about, s.Unit)
	}
	if s.Better != 0 {
		about = append(about, s.Better.String()+" is better")
	}
	if len(about) > 0 {
		t += " (" + strings.Join(about, ", ") + ")"
	}
	if opt.JobName != "" {
		t += " of job " + opt.JobName
	}
	if opt.History != "" {
		t += ", " + opt.History + " history"
	}
	if opt.Branch != "" {
		t += " of " + opt.Branch
	}
	return t
}

// changeNote is a change point as the text history shows it.
func changeNote(c history.Change) string {
	s := fmt.Sprintf("<- change %+.1f%%", c.Step)
	if len(c.Culprits) == 0 {
		return s + ": " + c.Note
	}
	var cs []string
	for _, cu := range c.Culprits {
		x := fmt.Sprintf("%s %s %+.1f%%", gitrev.Short(cu.Commit), cu.Verdict, cu.Change)
		switch {
		case cu.Withdrawn:
			x += " (withdrawn)"
		case cu.State != "" && cu.State != "untriaged":
			x += " (" + cu.State + ")"
		}
		cs = append(cs, x)
	}
	if len(cs) == 1 {
		return s + ": culprit " + cs[0]
	}
	return s + ": culprits " + strings.Join(cs, ", ")
}

// The JSON history (docs/watch.md).
type (
	historyJSON struct {
		Version int             `json:"version"`
		Job     string          `json:"job"`
		JobKey  string          `json:"job_key"`
		History string          `json:"history"`
		Variant string          `json:"variant"`
		Branch  string          `json:"branch"`
		Metric  string          `json:"metric"`
		Unit    string          `json:"unit"`
		Better  string          `json:"better"`
		Points  []historyPoint  `json:"points"`
		Changes []historyChange `json:"changes"`
	}
	historyPoint struct {
		Commit   string   `json:"commit"`
		Subject  string   `json:"subject"`
		Index    int      `json:"index"`
		Session  string   `json:"session"`
		Ref      string   `json:"ref"`
		NewChain bool     `json:"new_chain"`
		Runs     int      `json:"runs"`
		Median   float64  `json:"median"`
		MedianLo float64  `json:"median_lo"`
		MedianHi float64  `json:"median_hi"`
		Level    float64  `json:"level"`
		Step     *float64 `json:"step"`
		StepLo   *float64 `json:"step_lo"`
		StepHi   *float64 `json:"step_hi"`
		P        *float64 `json:"p"`
		Ratio    *float64 `json:"ratio"`
		RatioLo  *float64 `json:"ratio_lo"`
		RatioHi  *float64 `json:"ratio_hi"`
	}
	historyChange struct {
		Point    int              `json:"point"`
		From     string           `json:"from"`
		To       string           `json:"to"`
		Step     float64          `json:"step"`
		Culprits []historyCulprit `json:"culprits"`
		Note     string           `json:"note,omitempty"`
	}
	historyCulprit struct {
		Commit    string          `json:"commit"`
		Subject   string          `json:"subject"`
		Verdict   verdict.Verdict `json:"verdict"`
		Change    float64         `json:"change"`
		State     string          `json:"state"`
		Reason    string          `json:"reason,omitempty"`
		Withdrawn bool            `json:"withdrawn"`
	}
)

func writeHistoryJSON(w io.Writer, s *history.Series, opt HistoryOptions) error {
	doc := historyJSON{Version: doc.HistoryVersion, Job: opt.JobName, JobKey: s.Job, History: opt.History, Variant: s.Variant, Branch: opt.Branch,
		Metric: s.Metric, Unit: s.Unit, Better: s.Better.String(), Points: []historyPoint{}, Changes: []historyChange{}}
	for _, p := range s.Points {
		hp := historyPoint{Commit: p.Commit.Hash, Subject: p.Commit.Subject, Index: p.Index, Session: p.Session, Ref: p.Ref,
			NewChain: p.NewChain, Runs: p.Runs, Median: p.Median, MedianLo: p.MedianLo, MedianHi: p.MedianHi, Level: p.Level}
		if hasStep(p) {
			hp.Step, hp.StepLo, hp.StepHi, hp.P = &p.Step, &p.Lo, &p.Hi, &p.P
		}
		if p.Ratio > 0 {
			hp.Ratio, hp.RatioLo, hp.RatioHi = &p.Ratio, &p.RatioLo, &p.RatioHi
		}
		doc.Points = append(doc.Points, hp)
	}
	for _, c := range s.Changes {
		hc := historyChange{Point: c.Index, From: c.From, To: c.To, Step: c.Step, Culprits: []historyCulprit{}, Note: c.Note}
		for _, cu := range c.Culprits {
			hc.Culprits = append(hc.Culprits, historyCulprit{Commit: cu.Commit, Subject: cu.Subject, Verdict: cu.Verdict, Change: cu.Change,
				State: cu.State, Reason: cu.Reason, Withdrawn: cu.Withdrawn})
		}
		doc.Changes = append(doc.Changes, hc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func f(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
