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

	"github.com/perfbot/perfbot/internal/compare/stored"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/verdict"
)

// Point is one tested commit of a history.
type Point struct {
	Commit gitrev.Commit
	Index  int // position on the branch's first-parent list given to Build
	// Ref is the commit its step is measured against, in the same rounds
	// of one session: the point before when both were tested together,
	// else the reference it was tested with ("" for the first).
	Ref string
	// Session is the measuring session of its rounds, and Rounds their
	// run numbers.
	Session string
	Rounds  []int
	// Runs is the number of its runs in its session's rounds that gave
	// the metric.
	Runs int
	// Median is its median in its own session, and MedianLo..MedianHi
	// the median's confidence interval (both equal Median when the runs
	// are too few for one).
	Median, MedianLo, MedianHi float64
	// Step is its change against Ref in percent, measured within the
	// session (0 for the first point or a new chain), with the interval
	// Lo..Hi and p-value of the paired test.
	Step, Lo, Hi, P float64
	// TP is the p-value of Welch's t-test of the logs of the same runs,
	// unpaired (0 without a step): a cycle's few rounds leave the paired
	// test no room (8 pairs at p < 0.01 need every pair to agree, so one
	// run slowed by the machine's load hides even a 4x step, and a rank
	// test of the 16 runs misses it as well once that run passes every run
	// of the other commit), which this test, weighing how far each run
	// lies, has.
	TP float64
	// Level is the chained level: the first point's median times every
	// step since. Change points are looked for in the levels.
	Level float64
	// NewChain is set when the point's reference is not in the history (a
	// force-push removed it): its level restarts at its own median.
	NewChain bool
	// Ratio is its ratio to the history's anchor commit measured in the
	// same rounds of its session (1.05: 5 % above the anchor), with the
	// interval RatioLo..RatioHi; 0 when its session did not measure the
	// anchor (see Ratios).
	Ratio, RatioLo, RatioHi float64
}

// Series is the history of one metric of one job (and variant).
type Series struct {
	Job     string // job key
	Variant string
	Metric  string
	Unit    string
	Better  metric.Better
	Points  []Point
	// Changes are the change points watch handled in the history, oldest
	// first, with their culprits; set by the caller that knows them
	// (watch.Annotate), empty after Build.
	Changes []Change
}

// Change is a change point of a history that watch handled: the step
// from point Index-1 to point Index, and the culprits bisection named in
// between, with their triage verdicts.
type Change struct {
	Index    int
	From, To string // the two tested commits (full hashes)
	// Step is the change of the chained level from From to To, in percent.
	Step float64
	// Culprits are the confirmed culprits, none when bisection confirmed
	// none (Note says so).
	Culprits []Culprit
	Note     string
}

// Culprit is one culprit of a change and what its finding says about the
// history's metric.
type Culprit struct {
	Commit  string // full hash
	Subject string
	// Verdict is triage's verdict for this metric (real-regression,
	// text-alignment, ...); Change its change against its parent, in
	// percent. Both are the finding's main ones when the finding does not
	// list this metric.
	Verdict verdict.Verdict
	Change  float64
	// State is the finding's state (untriaged, acknowledged, dismissed)
	// and Reason why it was dismissed; Withdrawn is set when the culprit
	// left the watched branches.
	State     string
	Reason    string
	Withdrawn bool
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
		p := Point{Commit: c, Index: i, Ref: ref, Session: t.Session, Rounds: t.Rounds}
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
		p.Runs, p.Median = row.runs, row.median
		p.MedianLo, p.MedianHi = row.medianLo, row.medianHi
		refLevel, inHistory := level[ref]
		switch {
		case ref == "" || !inHistory || !row.delta || row.refMedian <= 0:
			p.Level = p.Median
			p.NewChain = ref != "" || len(s.Points) > 0
			p.Ref = ""
		default:
			// The paired test's estimate (Hodges-Lehmann on logs), which
			// its interval is about, not the change of the means.
			p.Step, p.P, p.TP = row.change, row.p, row.tp
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
	srcs := []stored.Source{{Commit: c, Layouts: []string{variant}, Round: stored.InRounds(t.Rounds)}}
	if ref != "" {
		srcs = append([]stored.Source{{Commit: gitrev.Commit{Hash: ref}, Layouts: []string{variant}, Round: stored.InRounds(t.Rounds)}}, srcs...)
	}
	tab, err := stored.Table(ctx, st, jobKey, srcs, alpha)
	if err != nil && tab != nil && ref != "" {
		srcs, ref = srcs[1:], ""
		tab, err = stored.Table(ctx, st, jobKey, srcs, alpha)
	}
	var out *stepStats
	switch {
	case err == nil:
		out = &stepStats{ref: ref, rows: make(map[string]rowStats, len(tab.Rows))}
		for _, row := range tab.Rows {
			last := row.Cells[len(row.Cells)-1]
			rs := rowStats{runs: last.Summary.N, median: last.Summary.Median, medianLo: last.Summary.Lo, medianHi: last.Summary.Hi,
				refMedian: row.Cells[0].Summary.Median}
			if d := last.Delta; d != nil {
				rs.delta, rs.change, rs.p, rs.lo, rs.hi = true, d.Stat.Change, d.Stat.P, d.Stat.Lo, d.Stat.Hi
				rs.tp = welchLogP(row.Cells[0].Samples, last.Samples)
			}
			out.rows[row.Metric] = rs
		}
	case tab == nil:
		// The store could not be read (or ctx ended): an error, never
		// "no successful run", and nothing to keep.
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("history: the step of %s: %w", c.Short(), err)
	}
	// The runs of a tested commit's rounds are final once it is recorded
	// as tested, so the outcome is kept, success or not.
	m.put(key, out)
	return out, nil
}

// Ratios sets each point's ratio to the anchor commit, measured in the
// point's own rounds: the anchor is re-measured in every session, so the
// ratios of different sessions are comparable with independent errors
// (the machine's speed cancels in each), and a detector for independent
// values (E-divisive) can pool a segment's points. A point whose session
// did not measure the anchor keeps a zero Ratio; the anchor's own points
// have ratio 1. An error reading the store is returned, not taken for an
// anchor not measured.
func Ratios(ctx context.Context, st *store.Store, s *Series, anchor string, alpha float64) error {
	return (*Memo)(nil).Ratios(ctx, st, s, anchor, alpha)
}

// Ratios is the package's Ratios through the memo: a point's comparison
// with the anchor (for every metric) is read once, as a step's is, so a
// rebuilt history compares only the commits tested since, whatever its
// metric.
func (m *Memo) Ratios(ctx context.Context, st *store.Store, s *Series, anchor string, alpha float64) error {
	for i := range s.Points {
		p := &s.Points[i]
		p.Ratio, p.RatioLo, p.RatioHi = 0, 0, 0
		if p.Commit.Hash == anchor {
			p.Ratio = 1
			continue
		}
		rs, err := m.ratio(ctx, st, s.Job, s.Variant, anchor, p, alpha)
		if err != nil {
			return err
		}
		if rs == nil {
			continue // the anchor was not measured in this session
		}
		row, ok := rs.rows[s.Metric]
		if !ok || !row.delta {
			continue
		}
		p.Ratio, p.RatioLo, p.RatioHi = 1+row.change/100, 1+row.lo/100, 1+row.hi/100
	}
	return nil
}

// ratio is a point's comparison with the anchor in the point's rounds;
// nil when either has no successful run there.
func (m *Memo) ratio(ctx context.Context, st *store.Store, jobKey, variant, anchor string, p *Point, alpha float64) (*stepStats, error) {
	key := memoKey{job: jobKey, variant: variant, commit: p.Commit.Hash, ref: "anchor " + anchor, session: p.Session, rounds: fmt.Sprint(p.Rounds), alpha: alpha}
	if rs, ok := m.get(key); ok {
		return rs, nil
	}
	srcs := []stored.Source{
		{Commit: gitrev.Commit{Hash: anchor}, Layouts: []string{variant}, Round: stored.InRounds(p.Rounds)},
		{Commit: p.Commit, Layouts: []string{variant}, Round: stored.InRounds(p.Rounds)},
	}
	tab, err := stored.Table(ctx, st, jobKey, srcs, alpha)
	switch {
	case tab == nil:
		// The store could not be read (or ctx ended): an error, never
		// "not measured".
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("history: the ratio of %s to the anchor %s: %w", p.Commit.Short(), gitrev.Short(anchor), err)
	case err != nil:
		m.put(key, nil) // no successful run of one of them in these rounds
		return nil, nil
	}
	rs := &stepStats{ref: anchor, rows: make(map[string]rowStats, len(tab.Rows))}
	for _, row := range tab.Rows {
		if d := row.Cells[1].Delta; d != nil {
			rs.rows[row.Metric] = rowStats{delta: true, change: d.Stat.Change, p: d.Stat.P, lo: d.Stat.Lo, hi: d.Stat.Hi}
		}
	}
	// Final once the point is tested, as a step is.
	m.put(key, rs)
	return rs, nil
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
