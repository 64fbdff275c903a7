package qualify

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/gate"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
	"github.com/perfbot/perfbot/internal/store"
)

// rulesOf are the gated metrics as the gate reads job.Gate: the listed
// ones with their thresholds, else every metric of the job's own that the
// runs hold (not the builtins), each at gate.threshold.
func rulesOf(j *job.Job, runs []store.RunRecord) ([]gate.Rule, error) {
	thr := gate.DefaultThresholdPct
	if j.Gate.ThresholdPct > 0 {
		thr = j.Gate.ThresholdPct
	}
	better := map[string]metric.Better{}
	var seen []string
	for _, r := range runs {
		for _, v := range r.Values {
			if _, ok := better[v.Name]; !ok {
				better[v.Name] = v.Better
				seen = append(seen, v.Name)
			}
		}
	}
	var rules []gate.Rule
	if len(j.Gate.Metrics) > 0 {
		for _, m := range j.Gate.Metrics {
			b, ok := better[m.Name]
			if !ok {
				return nil, fmt.Errorf("%s: gate.metrics.%s: no run of the qualification holds it", j.File, m.Name)
			}
			t := thr
			if m.ThresholdPct > 0 {
				t = m.ThresholdPct
			}
			rules = append(rules, gate.Rule{Metric: m.Name, ThresholdPct: t, Better: b})
		}
		return rules, nil
	}
	for _, n := range seen {
		if !metric.IsBuiltin(n) {
			rules = append(rules, gate.Rule{Metric: n, ThresholdPct: thr, Better: better[n]})
		}
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("qualify %s: %d OK runs hold no metric of the job's own to gate on", j.File, len(runs))
	}
	return rules, nil
}

// value is a run's value of a metric: the median of its values of that
// name (NaN when it has none).
func value(r store.RunRecord, name string) float64 {
	var xs []float64
	for _, v := range r.Values {
		if v.Name == name {
			xs = append(xs, v.Value)
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	return stats.Median(xs)
}

// valuesOf are the runs' values of the rules' metrics, run by run; a run
// that lacks one is left out.
func valuesOf(runs []store.RunRecord, rules []gate.Rule) [][]float64 {
	var out [][]float64
	for _, r := range runs {
		if row, ok := rowOf(r, rules); ok {
			out = append(out, row)
		}
	}
	return out
}

func rowOf(r store.RunRecord, rules []gate.Rule) ([]float64, bool) {
	row := make([]float64, len(rules))
	for m, rule := range rules {
		if row[m] = value(r, rule.Metric); math.IsNaN(row[m]) {
			return nil, false
		}
	}
	return row, true
}

// roundsOf pairs the plain and slowed runs of one round (same run
// number and session): base plain, head slowed.
func roundsOf(plain, slow []store.RunRecord, rules []gate.Rule) pool {
	p := pool{base: make([][]float64, len(rules)), head: make([][]float64, len(rules))}
	type key struct {
		idx     int
		session string
	}
	byKey := map[key]store.RunRecord{}
	for _, r := range slow {
		byKey[key{r.Index, r.Session}] = r
	}
	for _, a := range plain {
		b, ok := byKey[key{a.Index, a.Session}]
		if !ok {
			continue
		}
		ra, oka := rowOf(a, rules)
		rb, okb := rowOf(b, rules)
		if !oka || !okb {
			continue
		}
		for m := range rules {
			p.base[m] = append(p.base[m], ra[m])
			p.head[m] = append(p.head[m], rb[m])
		}
	}
	return p
}

// inputs are what the statistics work on.
type inputs struct {
	rules    []gate.Rule
	plain    [][]float64 // run by run, metric by metric
	rounds   pool        // plain and slowed, by round (slowdown only)
	slowName string
	budget   int // pairs a gate gets
	// planned is the gate's max_runs: its design (looks and nominal
	// levels) is that of max_runs even when max_time stops it at budget
	// (0: budget).
	planned int
	gates   int
	rng     *rand.Rand
}

// analyse fills in the A/A rate, the noise and detectable change per
// metric, and the slowdown's size and detection rate.
func (in inputs) analyse(res *Result) error {
	if res.Runs == 0 {
		res.Runs = len(in.plain)
	}
	aa := aaPool(in.plain, len(in.rules))
	res.Pairs = aa.pairs()
	if res.Pairs < MinPairs {
		return fmt.Errorf("qualify: %d usable runs (%d A/A pairs) of %s, fewer than the %d pairs of the gate's first look: raise --max-time (the budget ran out) or mend the failing runs (%d failed)",
			res.Runs, res.Pairs, res.Commit.Short(), MinPairs, res.Failed)
	}
	planned := in.planned
	if planned < in.budget {
		planned = in.budget
	}
	// The gate's own design: planned for max_runs, stopped by the draws'
	// length (budget) as max_time stops the gate.
	d := gate.NewDesign(res.Alpha, len(in.rules), planned)
	ds := draws(in.rng, in.gates, in.budget, res.Pairs, true)
	c := run(d, in.rules, aa, ds, shift{metric: -1})
	res.Gates, res.FalsePositives, res.Undecided, res.MeanPairs = c.Gates, c.Failed, c.Undecided, c.Pairs
	res.FPLo, res.FPHi = binomialInterval(c.Failed, c.Gates, 0.05)
	// Unfit only when the rate is shown above alpha: on a noisy runner a
	// correct gate's rate is alpha, and a point estimate above it half of
	// the time would call good runners unfit.
	res.Fit = res.FPLo <= res.Alpha
	// An order effect (the runner treats the two places of a balanced
	// round differently: a background job in step with the rounds) is
	// symmetric-looking to the swapped resampling above, so the whole pool
	// is decided once, as one gate of its size: identical builds that
	// regress there would fail the real gate again and again.
	od := gate.NewDesign(res.Alpha, len(in.rules), res.Pairs)
	for _, dec := range od.Simulate(in.rules, aa.base, aa.head) {
		if dec.Call == gate.Regressed {
			res.Fit = false
			res.OrderEffect = append(res.OrderEffect, fmt.Sprintf("%s %+.1f %% [%+.1f %%, %+.1f %%]", dec.Metric, dec.Worse(), dec.Lo, dec.Hi))
		}
	}
	for m, r := range in.rules {
		res.Metrics = append(res.Metrics, Metric{Name: r.Metric, Better: r.Better, ThresholdPct: r.ThresholdPct,
			NoisePct:      noisePct(aa.base[m], aa.head[m]),
			DetectablePct: detectable(d, in.rules, aa, ds, m),
			FormulaPct:    d.Detectable(r, aa.base[m], aa.head[m])})
	}
	if in.slowName == "" {
		return nil
	}
	s := &Slowdown{Name: in.slowName, Rounds: in.rounds.pairs()}
	res.Slowdown = s
	if s.Rounds < MinPairs {
		return nil // reported as too few rounds
	}
	for m, r := range in.rules {
		cmp := stats.ComparePaired(in.rounds.base[m], in.rounds.head[m], res.Alpha)
		s.Sizes = append(s.Sizes, Size{Metric: r.Metric, Change: cmp.Change, Lo: cmp.Lo, Hi: cmp.Hi})
	}
	sc := run(d, in.rules, in.rounds, draws(in.rng, in.gates, in.budget, s.Rounds, false), shift{metric: -1})
	s.Gates, s.Detected = sc.Gates, sc.Failed
	return nil
}

// advice says what would make an unfit (or barely decisive) runner fit.
func advice(r *Result, c Config) []string {
	if r.Fit {
		return nil
	}
	var a []string
	if len(r.OrderEffect) > 0 {
		a = append(a, "identical builds differ between the two places of a balanced round ("+strings.Join(r.OrderEffect, ", ")+"): something on the runner is in step with the rounds (a periodic job, a thermal or frequency cycle); find it or move to another runner")
	}
	if r.CPU < 0 {
		a = append(a, "pin the runs to one CPU (run.cpu: auto in the job, or --cpu N)")
	}
	a = append(a, fmt.Sprintf("take more runs: a larger pool than %d pairs (--max-runs, --max-time) and a larger gate budget (gate.max_runs, now %d pairs)", r.Pairs, c.gatePairs()))
	a = append(a, fmt.Sprintf("use a quieter runner: a dedicated machine, not a shared one (load average %.2f at the start, %.2f at the end, on %d CPUs)", r.LoadStart, r.LoadEnd, r.Runner.NProc))
	a = append(a, "gate on a deterministic metric: instruction counts, blind to the runner's noise")
	var noisy []string
	for _, m := range r.Metrics {
		if m.NoisePct > m.ThresholdPct/2 {
			noisy = append(noisy, fmt.Sprintf("%s (noise %.1f %%, threshold %.3g %%)", m.Name, m.NoisePct, m.ThresholdPct))
		}
	}
	if len(noisy) > 0 {
		slices.Sort(noisy)
		a = append(a, "or raise the threshold of "+strings.Join(noisy, ", "))
	}
	return a
}
