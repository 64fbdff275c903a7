// Package stored reads a comparison's samples back from the results store:
// the runs of each column (a commit under one or several layouts), paired
// by machine, session, round and layout, into a [compare.Table]. It is the
// one place where stored runs become a table; package compare itself
// knows nothing of the store.
package stored

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// Source is one column of a table read from the store: the runs of one
// commit, under one or several layouts, that belong to the comparison.
type Source struct {
	Commit  gitrev.Commit
	Variant string // the variant's name for the column header ("" plain)
	// Layouts are the store's variant IDs whose runs the column holds
	// (nil: the plain build only). Runs of layout k pair with runs of
	// layout k of the other columns.
	Layouts []string
	// Round maps a stored run number to its round in the comparison; a run
	// for which ok is false is left out.
	Round func(run int) (round int, ok bool)
}

// InRounds is a Source.Round that keeps the runs whose number is one of
// rounds, each its own round (runs of several commits with one number and
// one session were taken in one round: see measure.Options.WholeRounds).
func InRounds(rounds []int) func(int) (int, bool) {
	return func(run int) (int, bool) { return run, slices.Contains(rounds, run) }
}

// Within is a Source.Round that keeps runs first..last, numbered from 1:
// runs taken together by one measurement for several commits whose earlier
// runs differ in number (a bisection's check).
func Within(first, last int) func(int) (int, bool) {
	return func(run int) (int, bool) { return run - first + 1, run >= first && run <= last }
}

// Table reads the runs of the sources from the store (job jobKey) and
// builds the paired table of every metric the job stored, with each
// column's failed runs in Column.Failures and the machines and perfbot
// versions that took its runs in Column.Machines and Column.Versions. Runs pair only when they have
// the same machine, session, round and layout. When a column has no
// successful run it fails, with a table that holds only the columns (and
// their failures).
func Table(ctx context.Context, st *store.Store, jobKey string, srcs []Source, alpha float64) (*compare.Table, error) {
	cols := make([]compare.Column, len(srcs))
	samples := make([]map[string][]compare.Sample, len(srcs))
	var none []string
	for i, src := range srcs {
		cols[i] = compare.Column{ID: src.Commit.Hash, Subject: src.Commit.Subject, Variant: src.Variant}
		samples[i] = map[string][]compare.Sample{}
		layouts := src.Layouts
		if len(layouts) == 0 {
			layouts = []string{""}
		}
		for k, vid := range layouts {
			if err := readLayout(ctx, st, jobKey, src, k, vid, &cols[i], samples[i]); err != nil {
				return nil, err
			}
		}
		if cols[i].Runs-cols[i].Failed == 0 {
			none = append(none, gitrev.Short(src.Commit.Hash)+variantSuffix(src.Variant))
		}
	}
	if len(none) > 0 {
		return &compare.Table{Columns: cols, Paired: true, Alpha: alpha}, fmt.Errorf("no run succeeded for %s: nothing to compare (see the failures above)", strings.Join(none, ", "))
	}
	infos, err := st.Metrics(ctx, jobKey)
	if err != nil {
		return nil, err
	}
	series := make([]compare.Series, 0, len(infos))
	for _, m := range infos {
		s := compare.Series{Metric: m.Name, Unit: m.Unit, Better: m.Better, KPI: !metric.IsBuiltin(m.Name),
			Samples: make([][]compare.Sample, len(srcs))}
		for c := range srcs {
			s.Samples[c] = samples[c][m.Name]
		}
		series = append(series, s)
	}
	compare.AbsentIsZero(series, len(srcs))
	return compare.Build(cols, series, true, alpha), nil
}

// readLayout adds the runs of one layout of a source to its column.
func readLayout(ctx context.Context, st *store.Store, jobKey string, src Source, k int, vid string, col *compare.Column, out map[string][]compare.Sample) error {
	recs, err := st.RunsWithoutValues(ctx, jobKey, src.Commit.Hash, vid)
	if err != nil {
		return err
	}
	// The pair of each selected run, by run number (numbers are small and
	// dense: a slice, not a map, on this path that sees every sample).
	maxIdx := 0
	for _, r := range recs {
		maxIdx = max(maxIdx, r.Index)
	}
	pair := make([]*compare.Pair, maxIdx+1)
	for _, r := range recs {
		round, ok := src.Round(r.Index)
		if !ok {
			continue
		}
		pair[r.Index] = &compare.Pair{Machine: r.Machine, Session: r.Session, Round: round, Layout: k}
		col.AddMachine(r.Machine)
		col.AddVersion(r.Version)
		col.Runs++
		if r.Status != store.RunOK {
			col.Failed++
			addFailure(col, r, logDir(st, r))
		}
	}
	ss, err := st.Samples(ctx, jobKey, []string{src.Commit.Hash}, vid)
	if err != nil {
		return err
	}
	for name, xs := range ss[src.Commit.Hash] {
		dst := out[name]
		if dst == nil {
			dst = make([]compare.Sample, 0, len(xs))
		}
		for _, x := range xs {
			if x.Run < len(pair) && pair[x.Run] != nil {
				dst = append(dst, compare.Sample{Pair: *pair[x.Run], Value: x.Value})
			}
		}
		out[name] = dst
	}
	return nil
}

// addFailure counts a failed run of column c under its status.
func addFailure(c *compare.Column, r store.RunRecord, dir string) {
	for i := range c.Failures {
		f := &c.Failures[i]
		if f.Status == string(r.Status) && f.LogDir == dir {
			f.Count++
			if !slices.Contains(f.Reasons, r.Reason) {
				f.Reasons = append(f.Reasons, r.Reason)
			}
			return
		}
	}
	c.Failures = append(c.Failures, compare.Failure{Status: string(r.Status), Count: 1, Reasons: []string{r.Reason}, LogDir: dir})
}

// FleetLogs is where a failed run's logs are when a fleet's worker took it:
// the worker uploads them to the fleet's database (its StdoutPath and
// StderrPath are "sha256:<hash>").
const FleetLogs = "the fleet's database (the runs' stdout and stderr are sha256: blobs, served by perfbot serve --db at /fleet/api/blobs/HASH)"

// logDir says where a failed run's logs are.
func logDir(st *store.Store, r store.RunRecord) string {
	if strings.HasPrefix(r.StderrPath, "sha256:") || strings.HasPrefix(r.StdoutPath, "sha256:") {
		return FleetLogs
	}
	return filepath.Dir(st.RunDir(r.RunKey))
}

func variantSuffix(v string) string {
	if v == "" {
		return ""
	}
	return "+" + v
}

// Runs turns a target's stored samples (one variant of one commit) into
// samples keyed by run number alone: Pair{Round: run}.
func Runs(ss []store.Sample) []compare.Sample {
	out := make([]compare.Sample, len(ss))
	for i, s := range ss {
		out[i] = compare.Sample{Pair: compare.Pair{Round: s.Run}, Value: s.Value}
	}
	return out
}
