// Command gatestudy measures, on this machine, how often perfbot's
// pull-request gate and two naive same-runner schemes fail a change that
// changed nothing (A/A) and how often they catch a planted slowdown, side
// by side in one run (docs/ci.md, "Measurements").
//
// It builds a small C benchmark with gcc whose run parameter adds a known
// percentage of work, and for every trial takes fresh runs for each scheme
// in a random order:
//
//   - perfbot's gate: balanced interleaved pairs (B H | H B | ...), decided
//     look by look with the gate's own decision (internal/gate: NewDesign,
//     Decide, Overall) until decided or at the budget;
//
//   - naive, 5 runs each: B B B B B H H H H H, flagged by Welch's t-test
//     (one-sided, at the gate's alpha) or by a fixed threshold on the means;
//
//   - the same naive schemes with as many runs as the gate took in that
//     trial (B x n, then H x n).
//
//     go run ./tools/gatestudy                  # 200 A/A, 100 each of 5, 10, 20 %
//     go run ./tools/gatestudy -aa 50 -slow 20  # a quicker look
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/gate"
	"github.com/perfbot/perfbot/internal/metric"
)

type options struct {
	aa, slow     int
	pcts         []float64
	alpha        float64
	thresholdPct float64 // the gate's threshold
	naivePct     float64 // the naive threshold scheme's
	naiveRuns    int
	maxRuns      int
	runMs        float64
	seed         uint64
}

func main() {
	var o options
	var pcts string
	flag.IntVar(&o.aa, "aa", 200, "A/A gates (nothing changed)")
	flag.IntVar(&o.slow, "slow", 100, "gates of each planted slowdown")
	flag.StringVar(&pcts, "pcts", "5,10,20", "planted slowdowns, in percent, comma-separated")
	flag.Float64Var(&o.alpha, "alpha", gate.DefaultAlpha, "false-positive rate of one gate; also the naive t-test's level")
	flag.Float64Var(&o.thresholdPct, "threshold", 3, "the gate's threshold, percent")
	flag.Float64Var(&o.naivePct, "naive-threshold", 10, "the naive threshold scheme's threshold on the means, percent")
	flag.IntVar(&o.naiveRuns, "naive-runs", 5, "runs of each revision in the naive schemes")
	flag.IntVar(&o.maxRuns, "max-runs", gate.DefaultMaxRuns, "the gate's budget: runs of each revision")
	flag.Float64Var(&o.runMs, "run-ms", 3, "length of one run, milliseconds (calibrated)")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the trials' order")
	flag.Parse()
	for _, f := range strings.Split(pcts, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v <= 0 {
			fmt.Fprintf(os.Stderr, "gatestudy: -pcts %s: %q is not a positive percentage\n", pcts, f)
			os.Exit(2)
		}
		o.pcts = append(o.pcts, v)
	}
	switch {
	case o.aa < 1 || o.slow < 0:
		fail(fmt.Errorf("-aa %d -slow %d: need at least 1 A/A gate and no negative count", o.aa, o.slow))
	case o.naiveRuns < 2:
		fail(fmt.Errorf("-naive-runs %d: need at least 2 (a variance)", o.naiveRuns))
	case o.maxRuns < gate.FirstLook:
		fail(fmt.Errorf("-max-runs %d: need at least the first look's %d", o.maxRuns, gate.FirstLook))
	case o.alpha <= 0 || o.alpha >= 0.5:
		fail(fmt.Errorf("-alpha %g: want 0 < alpha < 0.5", o.alpha))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := study(ctx, o, os.Stdout); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gatestudy:", err)
	os.Exit(2)
}

// scheme names, in the table's order.
const (
	schemeGate   = "perfbot gate"
	welch5       = "naive Welch t, 5+5 runs"
	thresh5      = "naive 10 % threshold, 5+5 runs"
	welchMatched = "naive Welch t, the gate's runs"
	threshMatch  = "naive 10 % threshold, the gate's runs"
)

var schemes = []string{schemeGate, welch5, thresh5, welchMatched, threshMatch}

// tally counts one scenario's trials.
type tally struct {
	trials       int
	flagged      map[string]int
	runs         map[string]int // runs of both revisions, all trials
	inconclusive int            // the gate's
	pairs        []int          // the gate's, per trial
	wall         []time.Duration
}

func study(ctx context.Context, o options, w *os.File) error {
	dir, err := os.MkdirTemp("", "gatestudy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b, err := buildBench(ctx, dir)
	if err != nil {
		return err
	}
	if err := b.calibrate(ctx, o.runMs); err != nil {
		return err
	}
	d := gate.NewDesign(o.alpha, 1, o.maxRuns)
	rule := gate.Rule{Metric: "work_ms", ThresholdPct: o.thresholdPct, Better: metric.LowerIsBetter}

	// The trials of every scenario, shuffled: a change of the machine's
	// load during the study falls on every scenario alike.
	scen := append([]float64{0}, o.pcts...)
	var trials []float64
	for _, p := range scen {
		n := o.slow
		if p == 0 {
			n = o.aa
		}
		for range n {
			trials = append(trials, p)
		}
	}
	rng := rand.New(rand.NewPCG(o.seed, 0x9e3779b97f4a7c15))
	rng.Shuffle(len(trials), func(i, j int) { trials[i], trials[j] = trials[j], trials[i] })

	m := machineNow()
	tallies := map[float64]*tally{}
	for _, p := range scen {
		tallies[p] = &tally{flagged: map[string]int{}, runs: map[string]int{}}
	}
	loads := []float64{m.load1}
	start := time.Now()
	for i, pct := range trials {
		if err := trial(ctx, b, d, rule, o, pct, rng, tallies[pct]); err != nil {
			return err
		}
		if i%25 == 24 {
			loads = append(loads, machineNow().load1)
			fmt.Fprintf(os.Stderr, "gatestudy: %d/%d trials, %s\n", i+1, len(trials), time.Since(start).Round(time.Second))
		}
	}
	end := machineNow()
	report(w, o, d, b, m, end, loads, time.Since(start), scen, tallies)
	return nil
}

// trial runs the three measurements of one trial in a random order.
func trial(ctx context.Context, b *bench, d gate.Design, rule gate.Rule, o options, pct float64, rng *rand.Rand, t *tally) error {
	t.trials++
	var g gateResult
	steps := []func() error{
		func() (err error) { g, err = runGate(ctx, b, d, rule, pct); return err },
		func() error {
			base, head, err := runNaive(ctx, b, o.naiveRuns, pct)
			t.count(welch5, 2*o.naiveRuns, err == nil && welchSlower(base, head, o.alpha))
			t.count(thresh5, 2*o.naiveRuns, err == nil && thresholdSlower(base, head, o.naivePct))
			return err
		},
	}
	rng.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	t.count(schemeGate, 2*g.pairs, g.call == gate.Regressed)
	if g.call == gate.Undecided {
		t.inconclusive++
	}
	t.pairs = append(t.pairs, g.pairs)
	t.wall = append(t.wall, g.wall)
	// As many runs as the gate took, base then head.
	base, head, err := runNaive(ctx, b, g.pairs, pct)
	if err != nil {
		return err
	}
	t.count(welchMatched, 2*g.pairs, welchSlower(base, head, o.alpha))
	t.count(threshMatch, 2*g.pairs, thresholdSlower(base, head, o.naivePct))
	return nil
}

func (t *tally) count(scheme string, runs int, flagged bool) {
	t.runs[scheme] += runs
	if flagged {
		t.flagged[scheme]++
	}
}
