package compare

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
)

// Grouping result files into rows and columns, as cmd/benchstat does with
// golang.org/x/perf/benchproc: a filter, then the projections of the
// table (.config and the unit), the row, the column and what is ignored;
// the residue (every other key) is what a cell's samples may differ in.
// perfbot prints one table, so the table key becomes part of the row's
// name where it varies: "example.com/a:Encode-8.ns/op" and
// "example.com/b:Encode-8.ns/op" stay two rows.

type projections struct {
	filter                   *benchproc.Filter
	table, row, col, residue *benchproc.Projection
	unit                     *benchproc.Field
	query                    string // the filter as given
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// parseProjections parses the flags in benchstat's order; an error names
// the flag and its value.
func parseProjections(in Files) (*projections, error) {
	pr := &projections{query: orDefault(in.Filter, "*")}
	var err error
	if pr.filter, err = benchproc.NewFilter(pr.query); err != nil {
		return nil, fmt.Errorf("--filter %q: %v", pr.query, err)
	}
	var p benchproc.ProjectionParser
	if pr.table, pr.unit, err = p.ParseWithUnit(".config", pr.filter); err != nil {
		return nil, err
	}
	row := orDefault(in.Row, ".fullname")
	if pr.row, err = p.Parse(row, pr.filter); err != nil {
		return nil, fmt.Errorf("--row %q: %v", row, err)
	}
	col := orDefault(in.Col, ".file")
	if pr.col, err = p.Parse(col, pr.filter); err != nil {
		return nil, fmt.Errorf("--col %q: %v", col, err)
	}
	if _, err = p.Parse(in.Ignore, pr.filter); err != nil {
		return nil, fmt.Errorf("--ignore %q: %v", in.Ignore, err)
	}
	pr.residue = p.Residue()
	return pr, nil
}

type cellKey struct{ table, row benchproc.Key }

// group is one row being built: its samples per column.
type group struct {
	key     cellKey
	unitKey string
	unit    metric.FileUnit
	samples map[int][]float64
	residue map[int]map[benchproc.Key]bool
}

type grouping struct {
	pr       *projections
	cols     []Column
	colIdx   map[benchproc.Key]int
	groups   map[cellKey]*group
	order    []*group
	read     int // results read, before the filter
	warnings []error
}

func newGrouping(pr *projections) *grouping {
	return &grouping{pr: pr, colIdx: map[benchproc.Key]int{}, groups: map[cellKey]*group{}}
}

func (g *grouping) add(rf *metric.ResultFile, r *benchfmt.Result) {
	g.read++
	ok, err := g.pr.filter.Apply(r)
	if !ok {
		if err != nil {
			g.warnings = append(g.warnings, fmt.Errorf("%s: --filter: %v", rf.Name, err))
		}
		return
	}
	tableKeys := g.pr.table.ProjectValues(r)
	rowKey, colKey, res := g.pr.row.Project(r), g.pr.col.Project(r), g.pr.residue.Project(r)
	ci, ok := g.colIdx[colKey]
	if !ok {
		ci = len(g.cols)
		g.colIdx[colKey] = ci
		g.cols = append(g.cols, Column{ID: colKey.StringValues()})
	}
	for i, tk := range tableKeys {
		k := cellKey{tk, rowKey}
		gr := g.groups[k]
		if gr == nil {
			u := r.Values[i].Unit
			gr = &group{key: k, unitKey: u, unit: rf.Units[u], samples: map[int][]float64{}, residue: map[int]map[benchproc.Key]bool{}}
			g.groups[k] = gr
			g.order = append(g.order, gr)
		}
		gr.samples[ci] = append(gr.samples[ci], r.Values[i].Value)
		if gr.residue[ci] == nil {
			gr.residue[ci] = map[benchproc.Key]bool{}
		}
		gr.residue[ci][res] = true
	}
}

// finish names the rows and checks that something is compared.
func (g *grouping) finish(in Files) ([]Column, []Series, error) {
	if len(g.order) == 0 {
		if g.read > 0 {
			return nil, nil, fmt.Errorf("--filter %q keeps no result of %s", g.pr.query, strings.Join(in.Paths, ", "))
		}
		return nil, nil, fmt.Errorf("no results in %s", strings.Join(in.Paths, ", "))
	}
	var tables []benchproc.Key
	seen := map[benchproc.Key]bool{}
	for _, gr := range g.order {
		if !seen[gr.key.table] {
			seen[gr.key.table] = true
			tables = append(tables, gr.key.table)
		}
	}
	var varying []*benchproc.Field
	for _, f := range benchproc.NonSingularFields(tables) {
		if f != g.pr.unit {
			varying = append(varying, f)
		}
	}
	series := make([]Series, len(g.order))
	pooled := map[string]bool{}
	for i, gr := range g.order {
		name := gr.key.row.StringValues()
		if len(varying) > 0 {
			vals := make([]string, len(varying))
			for j, f := range varying {
				vals[j] = gr.key.table.Get(f)
			}
			name = strings.Join(vals, ",") + ":" + name
		}
		s := Series{Metric: name + "." + gr.unitKey, Unit: gr.unit.Unit, Better: gr.unit.Better, KPI: true,
			Samples: make([][]Sample, len(g.cols))}
		own := gr.unit.Unit == gr.unitKey // Go: the unit is the key
		for c, vs := range gr.samples {
			ss := make([]Sample, len(vs))
			for k, v := range vs {
				ss[k] = Sample{Pair: Pair{Round: k + 1}, Value: v}
			}
			s.Samples[c] = ss
			g.cols[c].Runs = max(g.cols[c].Runs, len(vs))
			if len(gr.residue[c]) > 1 {
				keys := make([]benchproc.Key, 0, len(gr.residue[c]))
				for k := range gr.residue[c] {
					keys = append(keys, k)
				}
				for _, f := range benchproc.NonSingularFields(keys) {
					pooled[f.Name] = true
				}
			}
		}
		s = scaleTime(s)
		if !own && s.Unit != "" {
			s.Metric += "_" + s.Unit // "sleep_0.1.time_ms": the unit in the name, as tables show names
		}
		series[i] = s
	}
	if len(pooled) > 0 {
		names := make([]string, 0, len(pooled))
		for n := range pooled {
			names = append(names, n)
		}
		sort.Strings(names)
		g.warnings = append(g.warnings, fmt.Errorf("samples of one row and column differ in %s and are pooled: name them in --row or --col to split them, or --ignore them",
			strings.Join(names, ", ")))
	}
	if err := checkShared(g.cols, series, in); err != nil {
		return nil, nil, err
	}
	return g.cols, series, nil
}

// timeUnits are the time units a series of seconds or nanoseconds is
// shown in, so that its values read as numbers, not 0.00.
var timeUnits = []struct {
	unit string
	sec  float64
}{{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}}

// scaleTime shows a series in "s" or "ns" in the largest time unit in
// which its base's median is at least 1 (all columns alike).
func scaleTime(s Series) Series {
	var from float64
	switch s.Unit {
	case "s":
		from = 1
	case "ns":
		from = 1e-9
	default:
		return s
	}
	var ref []float64
	for _, col := range s.Samples {
		if len(col) > 0 {
			for _, x := range col {
				ref = append(ref, x.Value)
			}
			break
		}
	}
	med := math.Abs(stats.Summarize(ref).Median) * from
	to := timeUnits[0]
	for _, u := range timeUnits {
		if med >= u.sec {
			to = u
		}
	}
	if to.sec == from {
		return s
	}
	f := from / to.sec
	s.Unit = to.unit
	for _, col := range s.Samples {
		for k := range col {
			col[k].Value *= f
		}
	}
	return s
}
