// The pairs a look decides on, read back from the store.

package gate

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
	"github.com/perfbot/perfbot/internal/store"
)

// series is one metric's pairs: base[i] and head[i] ran in round i.
type series struct {
	info       store.MetricInfo
	base, head []float64
}

// readPairs reads every metric of the outcome's rounds, paired by round
// (a round's runs share their run number and session), a run's several
// values reduced to their median as compare does. The metrics come in the
// store's order, the job's own before perfbot's builtins.
func readPairs(ctx context.Context, st *store.Store, j *job.Job, out *measure.Outcome) ([]series, error) {
	var per [2]map[string]map[int]float64
	for i := range 2 {
		t := out.Targets[i].Target
		ss, err := st.Samples(ctx, j.Key(), []string{t.Commit.Hash}, measure.VariantID(t.Variant))
		if err != nil {
			return nil, err
		}
		per[i] = map[string]map[int]float64{}
		for name, xs := range ss[t.Commit.Hash] {
			byRun := map[int][]float64{}
			for _, x := range xs {
				if slices.Contains(out.Rounds, x.Run) {
					byRun[x.Run] = append(byRun[x.Run], x.Value)
				}
			}
			per[i][name] = map[int]float64{}
			for run, vs := range byRun {
				per[i][name][run] = stats.Median(vs)
			}
		}
	}
	infos, err := st.Metrics(ctx, j.Key())
	if err != nil {
		return nil, err
	}
	rounds := slices.Clone(out.Rounds)
	sort.Ints(rounds)
	var all []series
	for _, m := range infos {
		s := series{info: m}
		for _, r := range rounds {
			b, okb := per[0][m.Name][r]
			h, okh := per[1][m.Name][r]
			if okb && okh {
				s.base, s.head = append(s.base, b), append(s.head, h)
			}
		}
		if len(s.base) > 0 {
			all = append(all, s)
		}
	}
	slices.SortStableFunc(all, func(a, b series) int {
		ab, bb := metric.IsBuiltin(a.info.Name), metric.IsBuiltin(b.info.Name)
		switch {
		case ab == bb:
			return 0
		case !ab:
			return -1
		}
		return 1
	})
	return all, nil
}

// rules are the gated metrics among the series: those names lists (nil:
// every metric of the job's own), at their thresholds. A named metric the
// runs did not store is an error.
func rules(all []series, names []string, thresholds map[string]float64, common float64, file string) ([]Rule, error) {
	var out []Rule
	rule := func(s series) Rule {
		t := common
		if x, ok := thresholds[s.info.Name]; ok {
			t = x
		}
		b := s.info.Better
		if b == 0 {
			b = metric.LowerIsBetter
		}
		return Rule{Metric: s.info.Name, ThresholdPct: t, Better: b}
	}
	if len(names) == 0 {
		for _, s := range all {
			if !metric.IsBuiltin(s.info.Name) {
				out = append(out, rule(s))
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("gate %s: the runs stored no metric of the job's own to gate on", file)
		}
		return out, nil
	}
	for _, n := range names {
		i := slices.IndexFunc(all, func(s series) bool { return s.info.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("gate %s: gated metric %q: no run of both revisions stored it", file, n)
		}
		out = append(out, rule(all[i]))
	}
	return out, nil
}
