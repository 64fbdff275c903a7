package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/plot"
	"github.com/perfbot/perfbot/internal/report/doc"
	"github.com/perfbot/perfbot/internal/store"
)

// FindingView is a finding with its evidence (GET /api/findings/{culprit}).
type FindingView struct {
	Version int `json:"version"` // APIVersion
	FindingSummary
	// Finding is the finding as watch stored it (docs/watch.md), with the
	// 0-day table, the triage's text and JSON reports, how it was found
	// and the commands that reproduce it.
	Finding   *finding.Finding `json:"finding"`
	Updated   time.Time        `json:"updated"`
	SentTo    []string         `json:"sent_to"`
	JobRef    *JobRef          `json:"job_ref,omitempty"`
	Suspects  []SuspectView    `json:"suspects"`
	Layout    string           `json:"layout_note,omitempty"` // why the suspects are not drawn
	Padding   string           `json:"padding,omitempty"`     // triage's restore padding, in words
	PadAsm    string           `json:"padding_asm,omitempty"` // the padding as an assembler file
	PadHow    string           `json:"padding_how,omitempty"`
	Bisect    *BisectView      `json:"bisect,omitempty"`
	Related   []FindingSummary `json:"related"` // other findings with the same layout cause
	Actions   []*ActionView    `json:"actions"`
	ReadOnly  bool             `json:"read_only"`
	Queue     bool             `json:"queue"`
	HistoryAt string           `json:"history,omitempty"` // the history page of its metric, around the culprit

	Experiments []ExperimentView `json:"-"`
	DecidedBy   string           `json:"-"`
}

// ExperimentView is one of triage's experiments, drawn.
type ExperimentView struct {
	Name, Title, Outcome, Estimate, Reason string
	Decided                                bool
	SVG                                    template.HTML
}

// SuspectView is one of the layout diff's suspects.
type SuspectView struct {
	Rank       int    `json:"rank"`
	Name       string `json:"name"`
	Kind       string `json:"kind"` // func or object
	Section    string `json:"section"`
	OffBase    uint64 `json:"offset_before"` // mod 64
	OffChanged uint64 `json:"offset_after"`
	Why        string `json:"why"`
	// From the layout diff of the stored builds, when they are at hand.
	SizeBefore uint64        `json:"size_before,omitempty"`
	SizeAfter  uint64        `json:"size_after,omitempty"`
	Shift      int64         `json:"shift"` // bytes the symbol moved
	Run        string        `json:"run,omitempty"`
	Root       string        `json:"root_change,omitempty"`
	SVG        template.HTML `json:"-"`
}

// BisectView is how the culprit was found: the bisection's steps.
type BisectView struct {
	Metric  string       `json:"metric"`
	Good    string       `json:"good"`
	Bad     string       `json:"bad"`
	Commits int          `json:"commits"`
	Runs    int          `json:"runs"`
	Steps   []BisectStep `json:"steps"`
}

// BisectStep is one step of a bisection.
type BisectStep struct {
	N       int            `json:"n"`
	Commit  string         `json:"commit"`
	Subject string         `json:"subject"`
	Verdict bisect.Verdict `json:"verdict"`
	Runs    int            `json:"runs"`
	Reason  string         `json:"reason"`
}

func (s *Server) findingPage(r *http.Request) (string, any, error) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return "", nil, err
	}
	v, err := s.finding(r.Context(), r.PathValue("culprit"))
	return "finding", v, err
}

func (s *Server) findingAPI(r *http.Request) (any, error) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return nil, err
	}
	return s.finding(r.Context(), r.PathValue("culprit"))
}

// lookup finds the finding of a culprit given by 7 hex digits or more.
func (s *Server) lookup(ctx context.Context, prefix string) (*source, *store.FindingRecord, error) {
	if len(prefix) < 7 || len(prefix) > 64 || !isHex(prefix) {
		return nil, nil, errorf(http.StatusBadRequest, "%q is not a commit: want at least 7 hex digits of a culprit", prefix)
	}
	prefix = strings.ToLower(prefix)
	var src *source
	var rec *store.FindingRecord
	for _, sc := range s.cat.stores {
		st, err := sc.open()
		if err != nil {
			return nil, nil, err
		}
		if st == nil {
			continue
		}
		fs, err := st.Findings(ctx)
		if err != nil {
			return nil, nil, err
		}
		for i := range fs {
			if strings.HasPrefix(fs[i].Culprit, prefix) {
				if rec != nil && rec.Culprit != fs[i].Culprit {
					return nil, nil, errorf(http.StatusBadRequest, "commit %s is ambiguous: several findings' culprits start so", prefix)
				}
				src, rec = sc, &fs[i]
			}
		}
	}
	if rec == nil {
		return nil, nil, errorf(http.StatusNotFound, "no finding of a commit %s in the stores served", prefix)
	}
	return src, rec, nil
}

func (s *Server) finding(ctx context.Context, prefix string) (*FindingView, error) {
	src, rec, err := s.lookup(ctx, prefix)
	if err != nil {
		return nil, err
	}
	f, err := finding.Decode(rec.Data)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", src.dir, err)
	}
	v := &FindingView{Version: APIVersion, Finding: f, Updated: rec.Updated, SentTo: rec.SentTo, Related: []FindingSummary{}, Suspects: []SuspectView{},
		ReadOnly: s.cfg.Token == "", Queue: s.cfg.Queue != nil, Actions: []*ActionView{},
		FindingSummary: FindingSummary{Culprit: rec.Culprit, Short: gitrev.Short(rec.Culprit), Subject: f.Subject, Job: f.Job, Metric: f.Metric,
			Change: f.Change, Verdict: f.Verdict, State: string(rec.State), Reason: rec.Reason, Withdrawn: rec.Withdrawn, Found: rec.Created,
			LayoutCause: f.LayoutCause, Store: src.dir}}
	je := s.cat.jobNamed(src, f.Job)
	if je != nil {
		v.JobID = je.ID
		v.JobRef = &JobRef{ID: je.ID, Name: je.Name, Key: je.Key}
		v.HistoryAt = fmt.Sprintf("/jobs/%s/history?metric=%s&branch=%s", je.ID, url.QueryEscape(f.Metric), url.QueryEscape(f.Branch))
		for _, a := range []struct {
			label string
			a     Action
		}{
			{"Triage again", Action{Kind: TriageAction, Job: je.ID, Commits: []string{f.Parent, f.Culprit}, Metric: f.Metric}},
			{"Compare again", Action{Kind: CompareAction, Job: je.ID, Commits: []string{f.Parent, f.Culprit}}},
		} {
			if av := s.offer(ctx, a.label, a.a); av != nil {
				v.Actions = append(v.Actions, av)
			}
		}
	}
	if all, err := s.findings(ctx); err == nil && f.LayoutCause != "" {
		for _, o := range all {
			if o.LayoutCause == f.LayoutCause && o.Culprit != rec.Culprit {
				v.Related = append(v.Related, o)
			}
		}
	}
	tr := &doc.Triage{}
	if len(f.TriageReport) > 0 {
		t, err := doc.DecodeTriage(f.TriageReport)
		if err != nil {
			s.logf("finding %s: %v", v.Short, err)
		}
		if t != nil {
			tr = t
		}
	}
	v.Experiments = experiments(tr)
	v.DecidedBy = strings.Join(tr.DecidedBy, ", ")
	v.Padding = tr.Padding
	for i, sp := range tr.Suspects {
		v.Suspects = append(v.Suspects, SuspectView{Rank: i + 1, Name: sp.Name, Kind: sp.Kind, Section: sp.Section,
			OffBase: sp.OffsetBefore, OffChanged: sp.OffsetAfter, Why: sp.Why})
	}
	switch {
	case len(f.TriageReport) == 0:
		v.Layout = "this finding was recorded without triage's JSON report (by a perfbot before the dashboard): its text is below"
	case len(v.Suspects) == 0:
		v.Layout = "triage's layout diff named no suspect: no function or object changed its place in its cache lines"
	case je == nil:
		v.Layout = "the store no longer knows the job, so its builds cannot be found"
	default:
		s.drawSuspects(ctx, je, src, f, v)
	}
	if f.BisectKey != "" {
		if st, err := src.open(); err == nil && st != nil {
			if bs, err := bisect.LoadState(ctx, st, f.BisectKey, false); err == nil && bs != nil {
				v.Bisect = bisectView(bs)
			}
		}
	}
	return v, nil
}

// experiments draws triage's experiments side by side, on one value axis.
func experiments(tr *doc.Triage) []ExperimentView {
	type drawn struct {
		ev     ExperimentView
		groups []plot.Group
	}
	var ds []drawn
	var all []plot.Group
	decided := map[string]bool{}
	for _, n := range tr.DecidedBy {
		decided[n] = true
	}
	for _, e := range tr.Experiments {
		ev := ExperimentView{Name: e.Name, Title: e.Title, Outcome: e.Outcome, Reason: e.Reason, Decided: decided[e.Name]}
		if e.Change != nil {
			ev.Estimate = fmt.Sprintf("%+.1f%%", *e.Change)
			if e.Lo != nil && e.Hi != nil {
				ev.Estimate += fmt.Sprintf(" [%+.1f%%, %+.1f%%]", *e.Lo, *e.Hi)
			}
		}
		var gs []plot.Group
		if len(e.Layouts) > 0 {
			for _, l := range e.Layouts {
				gs = append(gs, plot.Group{Label: "base", Sub: plot.ShortLabel(l.Variant, 12), Values: l.BaseValues},
					plot.Group{Label: "changed", Sub: plot.ShortLabel(l.Variant, 12), Values: l.ChangedValues, Changed: true})
			}
		} else {
			for i, c := range e.Columns {
				sub := gitrev.Short(c.Commit)[:min(7, len(c.Commit))]
				if c.Variant != "" {
					sub += " " + c.Variant
				}
				gs = append(gs, plot.Group{Label: c.Label, Sub: plot.ShortLabel(sub, 18), Values: c.Values, Changed: i > 0 && !strings.HasPrefix(c.Label, "base")})
			}
		}
		all = append(all, gs...)
		ds = append(ds, drawn{ev, gs})
	}
	lo, hi := plot.ValueRange(all)
	out := make([]ExperimentView, 0, len(ds))
	for _, d := range ds {
		var b bytes.Buffer
		if err := plot.Distribution(&b, d.groups, plot.DistOptions{Title: d.ev.Name, Unit: tr.Metric.Unit, Lo: lo, Hi: hi}); err == nil {
			d.ev.SVG = template.HTML(b.String())
		}
		out = append(out, d.ev)
	}
	return out
}

func bisectView(bs *bisect.State) *BisectView {
	r := bs.Result
	v := &BisectView{Metric: r.Metric, Good: r.Good.Short(), Bad: r.Bad.Short(), Commits: r.Commits, Runs: r.Runs, Steps: []BisectStep{}}
	for _, st := range r.Steps {
		v.Steps = append(v.Steps, BisectStep{N: st.N, Commit: st.Commit.Short(), Subject: st.Commit.Subject, Verdict: st.Verdict, Runs: st.Runs, Reason: st.Reason})
	}
	return v
}

// finite is false for NaN and infinities.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
