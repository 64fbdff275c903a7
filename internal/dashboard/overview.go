package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/triage"
	"github.com/perfbot/perfbot/internal/verdict"
)

// Overview is the overview page's data (GET /api/overview).
type Overview struct {
	Version  int              `json:"version"` // APIVersion
	Jobs     []JobSummary     `json:"jobs"`
	Findings []FindingSummary `json:"findings"` // newest first, at most maxFindings
	// LastCycle is the newest watch cycle seen in the stores (nil when
	// nothing was tested).
	LastCycle *Cycle `json:"last_cycle"`
	// Running is what measures on this machine now, and the triages and
	// bisections the stores hold unfinished (and the queue's, when one is
	// wired).
	Running []Activity `json:"running"`
	// ReadOnly is true without a token; Queue when actions are enqueued
	// (else the pages show their commands).
	ReadOnly bool `json:"read_only"`
	Queue    bool `json:"queue"`
	// Watch is the watch file served ("" none).
	Watch string `json:"watch,omitempty"`
	// Actions: a watch cycle now (with a watch file).
	Actions []*ActionView `json:"actions"`
}

// JobSummary is one job on the overview (GET /api/jobs lists them).
type JobSummary struct {
	ID        string       `json:"id"` // in URLs
	Key       string       `json:"key"`
	Name      string       `json:"name"`
	File      string       `json:"file,omitempty"`
	Store     string       `json:"store"`
	Watched   bool         `json:"watched"` // named by the watch file
	Metrics   []MetricRef  `json:"metrics"`
	Histories []HistoryRef `json:"histories"`
	Findings  int          `json:"findings"` // findings whose main job is this one
	Dismissed int          `json:"dismissed"`
}

// MetricRef is a metric of a job.
type MetricRef struct {
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Better string `json:"better"` // lower or higher
	Own    bool   `json:"own"`    // the job's own metric (false: perfbot's monitors)
}

// HistoryRef is one history a job keeps.
type HistoryRef struct {
	Variant string    `json:"variant"` // "" plain
	Label   string    `json:"label"`   // plain, align64, ...
	Tested  int       `json:"tested"`  // commits tested
	Last    time.Time `json:"last"`    // when the newest was tested
	Cycle   int64     `json:"cycle"`   // its cycle
}

// Cycle is a watch cycle.
type Cycle struct {
	ID     int64     `json:"id"`   // when it started, Unix nanoseconds
	When   time.Time `json:"when"` // when its newest commit was tested
	Tested int       `json:"tested"`
}

// Activity is work in progress.
type Activity struct {
	Kind    string    `json:"kind"` // measuring, triage, bisect, queued
	What    string    `json:"what"`
	Stage   string    `json:"stage,omitempty"`
	Updated time.Time `json:"updated,omitzero"`
	Store   string    `json:"store,omitempty"`
}

// maxFindings is how many findings the overview lists.
const maxFindings = 50

func (s *Server) overviewPage(r *http.Request) (string, any, error) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return "", nil, err
	}
	o, err := s.overview(r.Context())
	return "overview", o, err
}

func (s *Server) overviewAPI(r *http.Request) (any, error) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return nil, err
	}
	return s.overview(r.Context())
}

func (s *Server) jobsAPI(r *http.Request) (any, error) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return nil, err
	}
	o, err := s.overview(r.Context())
	if err != nil {
		return nil, err
	}
	return JobList{Version: APIVersion, Jobs: o.Jobs}, nil
}

func (s *Server) overview(ctx context.Context) (*Overview, error) {
	o := &Overview{Version: APIVersion, ReadOnly: s.cfg.Token == "", Queue: s.cfg.Queue != nil, Jobs: []JobSummary{}, Findings: []FindingSummary{}, Running: []Activity{},
		Actions: []*ActionView{}}
	jobs, err := s.cat.list(ctx) // with the jobs stored since the last look
	if err != nil {
		return nil, err
	}
	if s.cat.watch != nil {
		o.Watch = s.cat.watch.File
		if av := s.offer(ctx, "Run a watch cycle now", Action{Kind: RerunAction}); av != nil {
			o.Actions = append(o.Actions, av)
		}
	}
	fs, err := s.findings(ctx)
	if err != nil {
		return nil, err
	}
	counts := map[string][2]int{}
	for _, f := range fs {
		c := counts[f.JobID]
		c[0]++
		if f.State == "dismissed" {
			c[1]++
		}
		counts[f.JobID] = c
	}
	o.Findings = fs[:min(len(fs), maxFindings)]
	cycles := map[int64]*Cycle{}
	for _, je := range jobs {
		js := JobSummary{ID: je.ID, Key: je.Key, Name: je.Name, File: je.File, Store: je.src.dir, Watched: je.Watched,
			Metrics: []MetricRef{}, Histories: []HistoryRef{}, Findings: counts[je.ID][0], Dismissed: counts[je.ID][1]}
		for _, m := range s.cat.metrics(ctx, je) {
			js.Metrics = append(js.Metrics, metricRef(m))
		}
		if st, _ := je.src.open(); st != nil {
			for _, v := range s.cat.variants(ctx, je) {
				ts, err := s.cat.tested(ctx, je, v)
				if err != nil {
					return nil, err
				}
				h := HistoryRef{Variant: v, Label: variantLabel(v), Tested: len(ts.byCommit)}
				for _, t := range ts.byCommit {
					if t.When.After(h.Last) {
						h.Last, h.Cycle = t.When, t.Cycle
					}
					c := cycles[t.Cycle]
					if c == nil {
						c = &Cycle{ID: t.Cycle}
						cycles[t.Cycle] = c
					}
					c.Tested++
					if t.When.After(c.When) {
						c.When = t.When
					}
				}
				js.Histories = append(js.Histories, h)
			}
		}
		o.Jobs = append(o.Jobs, js)
	}
	for _, c := range cycles {
		if o.LastCycle == nil || c.When.After(o.LastCycle.When) {
			o.LastCycle = c
		}
	}
	o.Running, err = s.running(ctx)
	return o, err
}

// running lists the measuring perfbot, the unfinished triages and
// bisections of the stores, and the queue's actions.
func (s *Server) running(ctx context.Context) ([]Activity, error) {
	out := []Activity{}
	if holder, busy := measure.MachineHolder(); busy {
		out = append(out, Activity{Kind: "measuring", What: holder})
	}
	if l, ok := s.cfg.Queue.(Lister); ok {
		qs, err := l.Queued(ctx)
		if err != nil {
			return nil, err
		}
		for _, q := range qs {
			out = append(out, Activity{Kind: "queued", What: q.Action.Command(), Stage: q.State, Updated: q.Updated})
		}
	}
	for _, src := range s.cat.stores {
		st, err := src.open()
		if err != nil || st == nil {
			continue
		}
		keys, err := st.StateKeys(ctx, triage.StateKind)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			data, err := st.GetState(ctx, triage.StateKind, k)
			if err != nil {
				continue
			}
			var ts struct {
				Stage   string
				Updated time.Time
			}
			if json.Unmarshal(data, &ts) != nil || ts.Stage == "done" {
				continue
			}
			// The key is job/base/changed/metric/preset/...
			p := strings.Split(k, "/")
			what := k
			if len(p) > 4 {
				what = "triage of " + gitrev.Short(p[1]) + ".." + gitrev.Short(p[2]) + " (" + p[3] + ")"
			}
			out = append(out, Activity{Kind: "triage", What: what, Stage: ts.Stage, Updated: ts.Updated, Store: src.dir})
		}
		keys, err = st.StateKeys(ctx, bisect.StateKind)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			bs, err := bisect.LoadState(ctx, st, k, false)
			if err != nil || bs == nil || bs.Phase == bisect.PhaseDone {
				continue
			}
			out = append(out, Activity{Kind: "bisect", What: "bisection of " + bs.Result.Metric + " " + bs.Result.Good.Short() + ".." + bs.Result.Bad.Short(),
				Stage: string(bs.Phase), Store: src.dir})
		}
	}
	return out, nil
}

// FindingSummary is a finding in a list.
type FindingSummary struct {
	Culprit     string          `json:"culprit"`
	Short       string          `json:"short"`
	Subject     string          `json:"subject"`
	JobID       string          `json:"job_id,omitempty"` // "" when the store no longer knows the job
	Job         string          `json:"job"`
	Metric      string          `json:"metric"`
	Change      float64         `json:"change"`
	Verdict     verdict.Verdict `json:"verdict"`
	State       string          `json:"state"`
	Reason      string          `json:"reason,omitempty"`
	Withdrawn   bool            `json:"withdrawn"`
	Found       time.Time       `json:"found"`
	LayoutCause string          `json:"layout_cause,omitempty"`
	Store       string          `json:"store"`
}

func (s *Server) findingsAPI(r *http.Request) (any, error) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return nil, err
	}
	fs, err := s.findings(r.Context())
	if err != nil {
		return nil, err
	}
	return FindingList{Version: APIVersion, Findings: fs}, nil
}

// findings lists every store's findings, newest first, those that share a
// layout cause together (as perfbot findings lists them).
func (s *Server) findings(ctx context.Context) ([]FindingSummary, error) {
	type item struct {
		sum FindingSummary
		f   *finding.Finding
	}
	var items []item
	for _, src := range s.cat.stores {
		st, err := src.open()
		if err != nil {
			return nil, err
		}
		if st == nil {
			continue
		}
		recs, err := st.Findings(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			f, err := finding.Decode(r.Data)
			if err != nil {
				s.logf("store %s: finding %s: %v", src.dir, gitrev.Short(r.Culprit), err)
				continue
			}
			fs := FindingSummary{Culprit: r.Culprit, Short: gitrev.Short(r.Culprit), Subject: f.Subject, Job: f.Job, Metric: f.Metric,
				Change: f.Change, Verdict: f.Verdict, State: string(r.State), Reason: r.Reason, Withdrawn: r.Withdrawn, Found: r.Created,
				LayoutCause: f.LayoutCause, Store: src.dir}
			if je := s.cat.jobNamed(src, f.Job); je != nil {
				fs.JobID = je.ID
			}
			items = append(items, item{fs, f})
		}
	}
	slices.SortStableFunc(items, func(a, b item) int { return b.sum.Found.Compare(a.sum.Found) })
	decoded := make([]*finding.Finding, len(items))
	for i := range items {
		decoded[i] = items[i].f
	}
	out := make([]FindingSummary, 0, len(items))
	for _, i := range finding.GroupByCause(decoded) {
		out = append(out, items[i].sum)
	}
	return out, nil
}

// jobNamed is the job of a store with the given name (a finding names its
// job so).
func (c *catalog) jobNamed(src *source, name string) *jobEntry {
	c.jmu.RLock()
	defer c.jmu.RUnlock()
	for _, je := range c.jobs {
		if je.src == src && je.Name == name {
			return je
		}
	}
	return nil
}

func metricRef(m store.MetricInfo) MetricRef {
	return MetricRef{Name: m.Name, Unit: m.Unit, Better: m.Better.String(), Own: !metric.IsBuiltin(m.Name)}
}
