package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/compare/stored"
	"github.com/perfbot/perfbot/internal/plot"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
)

// CompareView compares the stored runs of commits (GET /api/compare).
type CompareView struct {
	Version int             `json:"version"` // APIVersion
	Job     JobRef          `json:"job"`
	Commits []CompareCommit `json:"commits"`
	Metric  MetricRef       `json:"metric"` // the metric drawn
	Metrics []MetricRef     `json:"metrics"`
	// Table is the comparison in perfbot compare --format json's form;
	// NCompare the 0-day table perfbot compare prints.
	Table    json.RawMessage `json:"table"`
	NCompare string          `json:"ncompare"`
	// Notes say what the comparison cannot tell (runs not taken together).
	Notes   []string      `json:"notes"`
	Actions []*ActionView `json:"actions"`
	Queue   bool          `json:"queue"`

	SVG   template.HTML `json:"-"`
	Query string        `json:"-"` // the page's parameters but the metric
}

// CompareCommit is one column of a comparison.
type CompareCommit struct {
	Commit  string `json:"commit"`
	Short   string `json:"short"`
	Subject string `json:"subject"`
	Variant string `json:"variant"` // the store's variant id; "" plain
	Runs    int    `json:"runs"`
	Failed  int    `json:"failed"`
	// Machines are the machines that took its runs, sorted ("" for runs
	// that recorded none: those of a perfbot without a fleet).
	Machines []string `json:"machines"`
}

// maxColumns is the most commits one comparison takes.
const maxColumns = 8

func (s *Server) comparePage(r *http.Request) (string, any, error) {
	v, err := s.compare(r)
	return "compare", v, err
}

func (s *Server) compareAPI(r *http.Request) (any, error) { return s.compare(r) }

// compare reads ?job=ID&c=REV[:VARIANT]&c=...[&variant=V][&metric=M]: the
// stored runs of each commit (all of them; runs pair only when one round
// of one session took both), as perfbot compare would table them. It
// measures nothing.
func (s *Server) compare(r *http.Request) (*CompareView, error) {
	ctx := r.Context()
	q := r.URL.Query()
	if err := onlyParams(q, "job", "c*", "variant", "metric"); err != nil {
		return nil, err
	}
	if q.Get("job") == "" {
		return nil, errorf(http.StatusBadRequest, "parameter job is missing: which job's runs to compare (its id, from /api/jobs)")
	}
	je, err := s.cat.job(r.Context(), q.Get("job"))
	if err != nil {
		return nil, err
	}
	revs := q["c"]
	if len(revs) < 2 || len(revs) > maxColumns {
		return nil, errorf(http.StatusBadRequest, "parameter c: give 2 to %d commits (c=REV or c=REV:VARIANT, the base first), not %d", maxColumns, len(revs))
	}
	st, err := je.store()
	if err != nil {
		return nil, err
	}
	v := &CompareView{Version: APIVersion, Job: JobRef{ID: je.ID, Name: je.Name, Key: je.Key}, Notes: []string{}, Actions: []*ActionView{}, Queue: s.cfg.Queue != nil}
	var srcs []stored.Source
	for _, rv := range revs {
		rev, variant, _ := strings.Cut(rv, ":")
		if variant == "" {
			variant = q.Get("variant")
		}
		c, err := s.cat.resolve(ctx, je, rev)
		if err != nil {
			return nil, err
		}
		vid := s.variantID(ctx, je, variant)
		srcs = append(srcs, stored.Source{Commit: c, Variant: variantLabelOrEmpty(vid), Layouts: []string{vid},
			Round: func(run int) (int, bool) { return run, true }})
		v.Commits = append(v.Commits, CompareCommit{Commit: c.Hash, Short: c.Short(), Subject: c.Subject, Variant: vid})
	}
	// Every stored run of each commit: the dashboard measures nothing.
	tab, err := stored.Table(ctx, st, je.Key, srcs, je.Alpha)
	if err != nil {
		if tab == nil {
			return nil, err
		}
		a := Action{Kind: CompareAction, Commits: hashes(v.Commits)}
		s.fillJob(&a, je)
		return nil, errorf(http.StatusNotFound, "job %s: %v; measure them with: %s", je.Name, noRunText(err), a.Command())
	}
	// The watch file's effect is what counts, as perfbot compare's --effect.
	tab.EffectPct = je.Effect
	for i, col := range tab.Columns {
		v.Commits[i].Runs, v.Commits[i].Failed = col.Runs, col.Failed
	}
	if note, err := machines(ctx, st, je.Key, v.Commits); err != nil {
		return nil, err
	} else if note != "" {
		v.Notes = append(v.Notes, note)
	}
	ms := s.cat.metrics(ctx, je)
	for _, m := range ms {
		v.Metrics = append(v.Metrics, metricRef(m))
	}
	name := q.Get("metric")
	if name == "" && len(tab.Rows) > 0 {
		name = tab.Rows[0].Metric
	}
	ri := slices.IndexFunc(tab.Rows, func(row compare.Row) bool { return row.Metric == name })
	if ri < 0 {
		return nil, badParam("metric", name, "the runs compared have no such metric (they have "+metricNames(ms)+")")
	}
	row := tab.Rows[ri]
	v.Metric = MetricRef{Name: row.Metric, Unit: row.Unit, Better: row.Better.String(), Own: row.KPI}
	var jb, nb bytes.Buffer
	if err := report.Write(&jb, tab, report.Options{Format: "json"}); err != nil {
		return nil, err
	}
	v.Table = json.RawMessage(bytes.TrimSpace(jb.Bytes()))
	if err := report.Write(&nb, tab, report.Options{Format: "ncompare", All: true}); err != nil {
		return nil, err
	}
	v.NCompare = nb.String()
	for i, cell := range row.Cells[1:] {
		if cell.Delta == nil || cell.Delta.Stat.Test == "" {
			v.Notes = append(v.Notes, fmt.Sprintf("%s and %s: no test of %s: their runs were not taken in the same rounds of one session (no pairs), so only their medians compare; measuring them together (compare, below) gives the paired test",
				v.Commits[0].Short, v.Commits[i+1].Short, row.Metric))
		}
	}
	var groups []plot.Group
	for i, cell := range row.Cells {
		sub := v.Commits[i].Short[:min(7, len(v.Commits[i].Short))]
		if v.Commits[i].Variant != "" {
			sub += " " + variantLabel(v.Commits[i].Variant)
		}
		label := "base"
		if i > 0 {
			label = fmt.Sprintf("#%d", i)
		}
		groups = append(groups, plot.Group{Label: label, Sub: sub, Values: cell.Samples, Changed: i > 0})
	}
	var b bytes.Buffer
	if err := plot.Distribution(&b, groups, plot.DistOptions{Title: row.Metric, Unit: row.Unit}); err == nil {
		v.SVG = template.HTML(b.String())
	}
	cs := hashes(v.Commits)
	for _, a := range []struct {
		label string
		a     Action
	}{
		{"Compare (measure them together)", Action{Kind: CompareAction, Job: je.ID, Commits: cs}},
		{"Bisect between the first two", Action{Kind: BisectAction, Job: je.ID, Commits: cs[:2], Metric: row.Metric}},
		{"Triage the first two", Action{Kind: TriageAction, Job: je.ID, Commits: cs[:2], Metric: row.Metric}},
	} {
		if a.a.Kind != CompareAction && !row.KPI {
			continue // bisect and triage take the job's own metrics
		}
		if av := s.offer(ctx, a.label, a.a); av != nil {
			v.Actions = append(v.Actions, av)
		}
	}
	qs := r.URL.Query()
	qs.Del("metric")
	v.Query = qs.Encode()
	return v, nil
}

// variantID maps a variant given by id or by its history's label to the
// store's id; anything else is taken as an id.
func (s *Server) variantID(ctx context.Context, je *jobEntry, v string) string {
	if v == "" || v == "plain" {
		return ""
	}
	for _, id := range s.cat.variants(ctx, je) {
		if id == v || variantLabel(id) == v {
			return id
		}
	}
	return v
}

func variantLabelOrEmpty(id string) string {
	if id == "" {
		return ""
	}
	return variantLabel(id)
}

func hashes(cs []CompareCommit) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Commit
	}
	return out
}

// noRunText words compare's "no run succeeded" for a page.
func noRunText(err error) string {
	return strings.Replace(err.Error(), " (see the failures above)", "", 1)
}

// machines fills in the machines that took each commit's runs and says,
// when they are more than one, what that does to the comparison ("" when
// one machine, or none recorded, took them all).
func machines(ctx context.Context, st *store.Store, jobKey string, cs []CompareCommit) (string, error) {
	all := map[string]bool{}
	for i := range cs {
		recs, err := st.RunsWithoutValues(ctx, jobKey, cs[i].Commit, cs[i].Variant)
		if err != nil {
			return "", err
		}
		cs[i].Machines = []string{}
		for _, r := range recs {
			if !slices.Contains(cs[i].Machines, r.Machine) {
				cs[i].Machines = append(cs[i].Machines, r.Machine)
			}
			all[r.Machine] = true
		}
		slices.Sort(cs[i].Machines)
	}
	if len(all) < 2 {
		return "", nil
	}
	var each []string
	for _, c := range cs {
		each = append(each, c.Short+" on "+machineList(c.Machines))
	}
	return fmt.Sprintf("these runs come from %d machines (%s): runs of different machines never pair, and where a commit's runs or the base's are another machine's, their medians differ by the machines' speed as well as by the commits", len(all), strings.Join(each, "; ")), nil
}

// machineList names machines for a note.
func machineList(ms []string) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m
		if m == "" {
			names[i] = "a machine not recorded"
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
