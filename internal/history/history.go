// Package history builds the history of a job's metric along a branch from
// the commits perfbot watch tested: one point per tested commit, each step
// measured within one session against the commit tested before it, and
// the levels chained from those steps, so that the machine's drift between
// sessions (up to 2x between hours on a shared host) stays out of the
// series that change points are looked for in.
package history

import (
	"context"
	"fmt"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// Point is one tested commit of a history.
type Point struct {
	Commit gitrev.Commit
	Index  int // position on the branch's first-parent list given to Build
	// Ref is the commit its step is measured against, in the same rounds
	// of one session: the point before when both were tested together,
	// else the reference it was tested with ("" for the first).
	Ref string
	// Session is the measuring session of its rounds.
	Session string
	// Median is its median in its own session.
	Median float64
	// Step is its change against Ref in percent, measured within the
	// session (0 for the first point or a new chain), with the interval
	// Lo..Hi and p-value of the paired test.
	Step, Lo, Hi, P float64
	// Level is the chained level: the first point's median times every
	// step since. Change points are looked for in the levels.
	Level float64
	// NewChain is set when the point's reference is not in the history (a
	// force-push removed it): its level restarts at its own median.
	NewChain bool
}

// Series is the history of one metric of one job (and variant).
type Series struct {
	Job     string // job key
	Variant string
	Metric  string
	Unit    string
	Better  metric.Better
	Points  []Point
}

// Build reads the history of metric for the tested commits among commits
// (a branch's first-parent list, oldest first); commits that were not
// tested are skipped, so a commit no longer on the branch leaves the
// history while its runs stay stored.
func Build(ctx context.Context, st *store.Store, jobKey, variant, metricName string, commits []gitrev.Commit, alpha float64) (*Series, error) {
	return (*Memo)(nil).Build(ctx, st, jobKey, variant, metricName, commits, alpha)
}

// Build is the package's Build, reusing the steps the memo holds and
// keeping those it computes; a nil memo keeps nothing.
func (m *Memo) Build(ctx context.Context, st *store.Store, jobKey, variant, metricName string, commits []gitrev.Commit, alpha float64) (*Series, error) {
	tested, err := st.TestedCommits(ctx, jobKey, variant)
	if err != nil {
		return nil, err
	}
	return m.BuildFrom(ctx, st, tested, jobKey, variant, metricName, commits, alpha)
}

// BuildFrom is Build with the job's tested commits already read
// (st.TestedCommits of jobKey and variant), for a reader that keeps them.
func (m *Memo) BuildFrom(ctx context.Context, st *store.Store, tested map[string]store.Tested, jobKey, variant, metricName string,
	commits []gitrev.Commit, alpha float64) (*Series, error) {
	s := &Series{Job: jobKey, Variant: variant, Metric: metricName}
	infos, err := st.Metrics(ctx, jobKey)
	if err != nil {
		return nil, err
	}
	for _, info := range infos {
		if info.Name == metricName {
			s.Unit, s.Better = info.Unit, info.Better
		}
	}
	level := map[string]float64{}
	var prev *Point // the last point with a level
	for i, c := range commits {
		t, ok := tested[c.Hash]
		if !ok {
			continue
		}
		// The step is measured against the last point when both ran in
		// the same rounds (one cycle's new commits), else against the
		// reference the commit was measured with. A commit whose runs all
		// failed has no point and is never a comparator.
		ref := t.Ref
		if prev != nil && prev.Session == t.Session {
			ref = prev.Commit.Hash
		}
		p := Point{Commit: c, Index: i, Ref: ref, Session: t.Session}
		got, err := m.step(ctx, st, jobKey, variant, c, ref, t, alpha)
		if err != nil {
			return nil, err
		}
		if got == nil {
			continue // no successful run: its failures are in the store
		}
		// got.ref is "" when the reference had no successful run in these
		// rounds: the commit alone, as a new chain.
		p.Ref, ref = got.ref, got.ref
		row, ok := got.rows[metricName]
		if !ok {
			continue
		}
		p.Median = row.median
		refLevel, inHistory := level[ref]
		switch {
		case ref == "" || !inHistory || !row.delta || row.refMedian <= 0:
			p.Level = p.Median
			p.NewChain = ref != "" || len(s.Points) > 0
			p.Ref = ""
		default:
			// The paired test's estimate (Hodges-Lehmann on logs), which
			// its interval is about, not the change of the means.
			p.Step, p.P = row.change, row.p
			p.Lo, p.Hi = row.lo, row.hi
			p.Level = refLevel * row.median / row.refMedian
		}
		level[c.Hash] = p.Level
		s.Points = append(s.Points, p)
		pt := s.Points[len(s.Points)-1]
		prev = &pt
	}
	return s, nil
}

// step compares commit c with ref in the rounds it was tested in (ref ""
// when there is none), through the memo; nil when c has no successful run
// there.
func (m *Memo) step(ctx context.Context, st *store.Store, jobKey, variant string, c gitrev.Commit, ref string, t store.Tested, alpha float64) (*stepStats, error) {
	key := memoKey{job: jobKey, variant: variant, commit: c.Hash, ref: ref, session: t.Session, rounds: fmt.Sprint(t.Rounds), alpha: alpha}
	if got, ok := m.get(key); ok {
		return got, nil
	}
	srcs := []compare.Source{{Commit: c, Layouts: []string{variant}, Round: compare.InRounds(t.Rounds)}}
	if ref != "" {
		srcs = append([]compare.Source{{Commit: gitrev.Commit{Hash: ref}, Layouts: []string{variant}, Round: compare.InRounds(t.Rounds)}}, srcs...)
	}
	tab, err := compare.FromStore(ctx, st, jobKey, srcs, alpha)
	if err != nil && tab != nil && ref != "" {
		srcs, ref = srcs[1:], ""
		tab, err = compare.FromStore(ctx, st, jobKey, srcs, alpha)
	}
	var out *stepStats
	switch {
	case err == nil:
		out = &stepStats{ref: ref, rows: make(map[string]rowStats, len(tab.Rows))}
		for _, row := range tab.Rows {
			last := row.Cells[len(row.Cells)-1]
			rs := rowStats{median: last.Summary.Median, refMedian: row.Cells[0].Summary.Median}
			if d := last.Delta; d != nil {
				rs.delta, rs.change, rs.p, rs.lo, rs.hi = true, d.Stat.Change, d.Stat.P, d.Stat.Lo, d.Stat.Hi
			}
			out.rows[row.Metric] = rs
		}
	case tab == nil:
		// The store could not be read (or ctx ended): nothing to keep.
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil
	}
	// The runs of a tested commit's rounds are final once it is recorded
	// as tested, so the outcome is kept, success or not.
	m.put(key, out)
	return out, nil
}

func findRow(t *compare.Table, name string) *compare.Row {
	for i := range t.Rows {
		if t.Rows[i].Metric == name {
			return &t.Rows[i]
		}
	}
	return nil
}

// Levels returns the points' levels, in order.
func (s *Series) Levels() []float64 {
	out := make([]float64, len(s.Points))
	for i, p := range s.Points {
		out[i] = p.Level
	}
	return out
}

func (p Point) String() string {
	return fmt.Sprintf("%s %.4g (%+.1f%% vs %s)", p.Commit.Short(), p.Level, p.Step, gitrev.Short(p.Ref))
}
