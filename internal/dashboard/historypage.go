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

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/plot"
	"github.com/perfbot/perfbot/internal/verdict"
)

// HistoryView is a metric's history (GET /api/jobs/{job}/history).
type HistoryView struct {
	Version  int             `json:"version"` // APIVersion
	Job      JobRef          `json:"job"`
	Metric   MetricRef       `json:"metric"`
	Metrics  []MetricRef     `json:"metrics"`
	Variant  string          `json:"variant"` // the history: "" plain, else the knob's variant
	Label    string          `json:"label"`
	Variants []VariantRef    `json:"variants"`
	Branch   string          `json:"branch"`
	Branches []string        `json:"branches"`
	Total    int             `json:"total"` // tested commits in the history
	From     int             `json:"from"`  // the window shown: points [from, to)
	To       int             `json:"to"`
	Points   []HistoryPoint  `json:"points"`  // the window's
	Changes  []HistoryChange `json:"changes"` // the changes watch handled, in the whole history

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

// HistoryPoint is one tested commit of a history; the fields are those
// of perfbot history --format json's points (docs/watch.md), and i.
type HistoryPoint struct {
	I       int    `json:"i"` // its index in the history
	Commit  string `json:"commit"`
	Short   string `json:"short"`
	Subject string `json:"subject"`
	Session string `json:"session"`
	Ref     string `json:"ref"`
	// NewChain: the point's reference left the history; its level
	// restarts at its median.
	NewChain bool    `json:"new_chain"`
	Runs     int     `json:"runs"`
	Median   float64 `json:"median"` // in its own session, with its interval
	MedianLo float64 `json:"median_lo"`
	MedianHi float64 `json:"median_hi"`
	Level    float64 `json:"level"` // chained level
	// Step is the change against Ref in percent, within one session, with
	// the paired test's interval and p (0 for the first point or a new
	// chain).
	Step   float64 `json:"step"`
	StepLo float64 `json:"step_lo"`
	StepHi float64 `json:"step_hi"`
	P      float64 `json:"p"`
	// Ratio is the ratio to the history's anchor commit measured in the
	// point's own rounds, with its interval (null when its session did
	// not measure the anchor, or the history keeps none).
	Ratio   *float64 `json:"ratio"`
	RatioLo *float64 `json:"ratio_lo"`
	RatioHi *float64 `json:"ratio_hi"`
}

// HistoryChange is a change watch handled: the step from point index-1
// to index, and the culprits bisection named (history.Change).
type HistoryChange struct {
	Point    int              `json:"point"`
	From     string           `json:"from"`
	To       string           `json:"to"`
	Step     float64          `json:"step"` // of the chained level, percent
	Culprits []HistoryCulprit `json:"culprits"`
	Note     string           `json:"note,omitempty"` // no confirmed culprit
}

// HistoryCulprit is a culprit of a change, as its finding says.
type HistoryCulprit struct {
	Commit    string          `json:"commit"`
	Short     string          `json:"short"`
	Subject   string          `json:"subject"`
	Verdict   verdict.Verdict `json:"verdict"`
	Change    float64         `json:"change"`
	State     string          `json:"state"`
	Reason    string          `json:"reason,omitempty"`
	Withdrawn bool            `json:"withdrawn"`
	Finding   string          `json:"finding"` // the finding page
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
	err = plot.History(&b, hr.series, hr.opt)
	return b.Bytes(), err
}

// historyReq is a history request resolved: the job, its series (with
// its changes), what the parameters were resolved to, and the plot's
// window.
type historyReq struct {
	je     *jobEntry
	series *history.Series
	hp     *historyParams
	opt    plot.HistoryOptions
}

func (s *Server) resolveHistory(r *http.Request) (*historyReq, error) {
	q := r.URL.Query()
	if err := onlyParams(q, "metric", "variant", "branch", "from", "to", "width"); err != nil {
		return nil, err
	}
	je, err := s.cat.job(r.Context(), r.PathValue("job"))
	if err != nil {
		return nil, err
	}
	series, hp, err := s.cat.historyOf(r.Context(), je, q.Get("metric"), q.Get("variant"), q.Get("branch"))
	if err != nil {
		return nil, err
	}
	if len(series.Points) == 0 {
		return nil, errorf(http.StatusNotFound, "job %s has no tested commit with %s on %s (%s history)", je.Name, hp.metric.Name, hp.branch, variantLabel(hp.variant))
	}
	hr := &historyReq{je: je, series: series, hp: hp}
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
	je, series, hp, opt := hr.je, hr.series, hr.hp, hr.opt
	v := &HistoryView{Version: APIVersion, Job: JobRef{ID: je.ID, Name: je.Name, Key: je.Key}, Metric: metricRef(hp.metric), Variant: hp.variant, Label: variantLabel(hp.variant),
		Branch: hp.branch, Branches: hp.branches, Total: len(series.Points), From: opt.From, To: opt.To, Changes: []HistoryChange{}}
	for _, m := range hp.metrics {
		v.Metrics = append(v.Metrics, metricRef(m))
	}
	for _, vr := range hp.variants {
		v.Variants = append(v.Variants, VariantRef{Variant: vr, Label: variantLabel(vr)})
	}
	for _, p := range series.Points[opt.From:opt.To] {
		hp := HistoryPoint{I: len(v.Points) + opt.From, Commit: p.Commit.Hash, Short: p.Commit.Short(), Subject: p.Commit.Subject,
			Session: p.Session, Ref: p.Ref, NewChain: p.NewChain, Runs: p.Runs, Median: p.Median, MedianLo: p.MedianLo, MedianHi: p.MedianHi,
			Level: p.Level, Step: p.Step, StepLo: p.Lo, StepHi: p.Hi, P: p.P}
		if p.Ratio > 0 {
			hp.Ratio, hp.RatioLo, hp.RatioHi = &p.Ratio, &p.RatioLo, &p.RatioHi
		}
		v.Points = append(v.Points, hp)
	}
	for _, ch := range series.Changes {
		hc := HistoryChange{Point: ch.Index, From: ch.From, To: ch.To, Step: ch.Step, Note: ch.Note, Culprits: []HistoryCulprit{}}
		for _, cu := range ch.Culprits {
			hc.Culprits = append(hc.Culprits, HistoryCulprit{Commit: cu.Commit, Short: gitrev.Short(cu.Commit), Subject: cu.Subject, Verdict: cu.Verdict,
				Change: cu.Change, State: cu.State, Reason: cu.Reason, Withdrawn: cu.Withdrawn, Finding: "/findings/" + cu.Commit})
		}
		v.Changes = append(v.Changes, hc)
	}
	if !page {
		return v, nil
	}
	q := url.Values{"metric": {hp.metric.Name}, "variant": {hp.variant}, "branch": {hp.branch}}
	v.Query = q.Encode()
	var b bytes.Buffer
	opt.ChangeLink = func(ch history.Change) string {
		if len(ch.Culprits) == 0 {
			return ""
		}
		return "/findings/" + ch.Culprits[0].Commit
	}
	if err := plot.History(&b, series, opt); err != nil {
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
