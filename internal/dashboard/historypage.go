package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/plot"
	"github.com/perfbot/perfbot/internal/report"
)

// HistoryView is a metric's history (GET /api/jobs/{job}/history).
type HistoryView struct {
	Job      JobRef         `json:"job"`
	Metric   MetricRef      `json:"metric"`
	Metrics  []MetricRef    `json:"metrics"`
	Variant  string         `json:"variant"` // the history: "" plain, else the knob's variant
	Label    string         `json:"label"`
	Variants []VariantRef   `json:"variants"`
	Branch   string         `json:"branch"`
	Branches []string       `json:"branches"`
	Total    int            `json:"total"` // tested commits in the history
	From     int            `json:"from"`  // the window shown: points [from, to)
	To       int            `json:"to"`
	Points   []HistoryPoint `json:"points"` // the window's
	Marks    []HistoryMark  `json:"marks"`  // the changes watch handled, in the whole history

	// For the page.
	SVG, LayoutSVG template.HTML `json:"-"`
	Data           template.JS   `json:"-"` // the points, for the script; "" for long windows (it fetches them)
	Query          string        `json:"-"` // the page's parameters but the window
}

// JobRef names a job.
type JobRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Key  string `json:"key"`
}

// VariantRef is a history a job keeps.
type VariantRef struct {
	Variant string `json:"variant"`
	Label   string `json:"label"`
}

// HistoryPoint is one tested commit of a history.
type HistoryPoint struct {
	Index   int     `json:"i"`
	Commit  string  `json:"commit"`
	Short   string  `json:"short"`
	Subject string  `json:"subject"`
	Level   float64 `json:"level"`  // chained level
	Median  float64 `json:"median"` // in its own session
	// Step is the change against Ref in percent, within one session, with
	// the paired test's interval and p (0 for the first point or a new
	// chain).
	Step     float64 `json:"step"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	P        float64 `json:"p"`
	Ref      string  `json:"ref"`
	NewChain bool    `json:"new_chain"`
	Session  string  `json:"session"`
}

// HistoryMark is a change watch handled.
type HistoryMark struct {
	Index   int    `json:"index"` // the point the step goes into
	Culprit string `json:"culprit"`
	Verdict string `json:"verdict"`
	Finding string `json:"finding,omitempty"` // the finding page
}

// maxEmbedded is the longest window whose points the page carries; the
// script fetches longer ones from the API when first needed.
const maxEmbedded = 1000

func (s *Server) historyPage(r *http.Request) (string, any, error) {
	v, err := s.history(r, true)
	return "history", v, err
}

func (s *Server) historyAPI(r *http.Request) (any, error) { return s.history(r, false) }

// historySVG is the history plot alone, as perfbot history --format svg
// writes it.
func (s *Server) historySVG(r *http.Request) ([]byte, error) {
	hr, err := s.resolveHistory(r)
	if err != nil {
		return nil, err
	}
	hr.opt.Standalone = true
	var b bytes.Buffer
	err = plot.History(&b, hr.series, plotMarks(hr.marks), hr.opt)
	return b.Bytes(), err
}

// historyReq is a history request resolved: the job, its series and
// marks, what the parameters were resolved to, and the plot's window.
type historyReq struct {
	je     *jobEntry
	series *history.Series
	marks  []report.HistoryMark
	hp     *historyParams
	opt    plot.HistoryOptions
}

func (s *Server) resolveHistory(r *http.Request) (*historyReq, error) {
	q := r.URL.Query()
	if err := onlyParams(q, "metric", "variant", "branch", "from", "to", "width"); err != nil {
		return nil, err
	}
	je, err := s.cat.job(r.PathValue("job"))
	if err != nil {
		return nil, err
	}
	series, marks, hp, err := s.cat.historyOf(r.Context(), je, q.Get("metric"), q.Get("variant"), q.Get("branch"))
	if err != nil {
		return nil, err
	}
	if len(series.Points) == 0 {
		return nil, errorf(http.StatusNotFound, "job %s has no tested commit with %s on %s (%s history)", je.Name, hp.metric.Name, hp.branch, variantLabel(hp.variant))
	}
	hr := &historyReq{je: je, series: series, marks: marks, hp: hp}
	hr.opt.From, hr.opt.To = 0, len(series.Points)
	if v := q.Get("from"); v != "" {
		if hr.opt.From, err = pointIndex(series, "from", v); err != nil {
			return nil, err
		}
	}
	if v := q.Get("to"); v != "" {
		i, err := pointIndex(series, "to", v)
		if err != nil {
			return nil, err
		}
		hr.opt.To = i + 1 // to is inclusive in the URL
	}
	if hr.opt.From >= hr.opt.To {
		return nil, errorf(http.StatusBadRequest, "parameters from=%s, to=%s: the range is empty (from must come before to)", q.Get("from"), q.Get("to"))
	}
	if v := q.Get("width"); v != "" {
		w, err := strconv.Atoi(v)
		if err != nil || w < 300 || w > 4000 {
			return nil, badParam("width", v, "want a width in pixels from 300 to 4000")
		}
		hr.opt.Width = w
	}
	return hr, nil
}

// pointIndex reads a window bound: a point's index, or a commit (7 hex
// digits at least) of the history.
func pointIndex(s *history.Series, name, v string) (int, error) {
	if len(v) < 7 {
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 || i >= len(s.Points) {
			return 0, badParam(name, v, "want a point's index (0 to "+strconv.Itoa(len(s.Points)-1)+") or a tested commit of at least 7 hex digits")
		}
		return i, nil
	}
	if !isHex(v) {
		return 0, badParam(name, v, "want a point's index or a commit's hex digits")
	}
	for i, p := range s.Points {
		if strings.HasPrefix(p.Commit.Hash, strings.ToLower(v)) {
			return i, nil
		}
	}
	return 0, errorf(http.StatusNotFound, "parameter %s=%s: no tested commit of this history starts so", name, v)
}

func (s *Server) history(r *http.Request, page bool) (*HistoryView, error) {
	ctx := r.Context()
	hr, err := s.resolveHistory(r)
	if err != nil {
		return nil, err
	}
	je, series, marks, hp, opt := hr.je, hr.series, hr.marks, hr.hp, hr.opt
	v := &HistoryView{Job: JobRef{ID: je.ID, Name: je.Name, Key: je.Key}, Metric: metricRef(hp.metric), Variant: hp.variant, Label: variantLabel(hp.variant),
		Branch: hp.branch, Branches: hp.branches, Total: len(series.Points), From: opt.From, To: opt.To, Marks: []HistoryMark{}}
	for _, m := range hp.metrics {
		v.Metrics = append(v.Metrics, metricRef(m))
	}
	for _, vr := range hp.variants {
		v.Variants = append(v.Variants, VariantRef{Variant: vr, Label: variantLabel(vr)})
	}
	for _, p := range series.Points[opt.From:opt.To] {
		v.Points = append(v.Points, HistoryPoint{Index: len(v.Points) + opt.From, Commit: p.Commit.Hash, Short: p.Commit.Short(), Subject: p.Commit.Subject,
			Level: p.Level, Median: p.Median, Step: p.Step, Lo: p.Lo, Hi: p.Hi, P: p.P, Ref: p.Ref, NewChain: p.NewChain, Session: p.Session})
	}
	for _, m := range marks {
		hm := HistoryMark{Index: m.Index, Culprit: m.Culprit, Verdict: m.Verdict}
		if m.Culprit != "" {
			hm.Finding = "/findings/" + m.Culprit
		}
		v.Marks = append(v.Marks, hm)
	}
	if !page {
		return v, nil
	}
	q := url.Values{"metric": {hp.metric.Name}, "variant": {hp.variant}, "branch": {hp.branch}}
	v.Query = q.Encode()
	var b bytes.Buffer
	opt.MarkLink = func(m plot.Mark) string {
		if m.Culprit == "" {
			return ""
		}
		return "/findings/" + m.Culprit
	}
	if err := plot.History(&b, series, plotMarks(marks), opt); err != nil {
		return nil, err
	}
	v.SVG = template.HTML(b.String())
	if lp := s.layoutPoints(ctx, je, hp.variant, series); lp != nil {
		b.Reset()
		if err := plot.LayoutHistory(&b, lp, plot.LayoutOptions{Width: opt.Width, From: opt.From, To: opt.To}); err == nil {
			v.LayoutSVG = template.HTML(b.String())
		}
	}
	if len(v.Points) <= maxEmbedded {
		data, err := json.Marshal(v.Points)
		if err != nil {
			return nil, err
		}
		v.Data = template.JS(data)
	}
	return v, nil
}

// layoutPoints are the layout summaries of the history's points, nil when
// none has one (a job without artifacts).
func (s *Server) layoutPoints(ctx context.Context, je *jobEntry, variant string, series *history.Series) []plot.LayoutPoint {
	ts, err := s.cat.tested(ctx, je, variant)
	if err != nil {
		return nil
	}
	out := make([]plot.LayoutPoint, len(series.Points))
	found := false
	for i, p := range series.Points {
		out[i].Commit = p.Commit.Short()
		if ls := ts.layout(p.Commit.Hash); ls != nil {
			out[i].Sections, out[i].Offsets = ls.Sections, ls.Offsets
			found = true
		}
	}
	if !found {
		return nil
	}
	return out
}

// plotMarks turns the marks perfbot history prints into the plot's (the
// same fields): the command line's svg format and the pages draw the same
// figure.
func plotMarks(ms []report.HistoryMark) []plot.Mark {
	out := make([]plot.Mark, len(ms))
	for i, m := range ms {
		out[i] = plot.Mark{Index: m.Index, Culprit: m.Culprit, Verdict: m.Verdict}
	}
	return out
}
