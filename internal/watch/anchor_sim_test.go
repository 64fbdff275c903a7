package watch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/stats"
)

// The question of docs/changepoints.md's "anchor design", asked of watch
// as it measures: is E-divisive over ratios to an anchor commit worth the
// anchor's runs? Watch measures each cycle's k new commits in R whole
// rounds together with the last tested commit (its reference); the anchor
// design (a job's anchor: true) adds one commit (the anchor, the same in
// every session) to every session's rounds, and runs E-divisive
// (anchorChanges) over each commit's ratio to it, beside watch's
// detectors over the chain of steps (changes). The fair rival spends the same runs
// on more rounds of the chain. Each commit's step and ratio are the
// estimate, interval and p of the same test package compare applies
// (Mann-Whitney below 8 pairs, the signed-rank test from 8), on simulated
// runs with known truth.

// anchorNoise is how one run scatters (log units): normal with sd cv, and
// with probability load slowed by an exponential factor of mean tail; on
// top, the machine's speed drifts between sessions (AR(1) in log, sd 0.2,
// correlation 0.95 from one session to the next: up to 2x between hours)
// and within a session from round to round (AR(1), sd 1 %, correlation
// 0.8), which every target of a round shares: what interleaved rounds and
// paired tests are for.
type anchorNoise struct {
	name           string
	cv, load, tail float64
}

const (
	sessionDriftSD, sessionDriftCorr = 0.2, 0.95
	roundDriftSD, roundDriftCorr     = 0.01, 0.8
)

var anchorNoises = []anchorNoise{
	{name: "quiet, CV 2 %", cv: 0.02},
	{name: "quiet, CV 4 %", cv: 0.04},
	{name: "loaded: CV 2 % + 25 % of runs slowed ~Exp(25 %)", cv: 0.02, load: 0.25, tail: 0.25},
}

// ar1 is the next value of an AR(1) process with stationary sd and
// correlation corr.
func ar1(r *rand.Rand, prev, sd, corr float64) float64 {
	return corr*prev + sd*math.Sqrt(1-corr*corr)*r.NormFloat64()
}

func (nz anchorNoise) run(r *rand.Rand) float64 {
	e := nz.cv * r.NormFloat64()
	if nz.load > 0 && r.Float64() < nz.load {
		e += nz.tail * r.ExpFloat64()
	}
	return e
}

// anchorDesign is one way of measuring and detecting.
type anchorDesign struct {
	name   string
	rounds int
	anchor bool // an anchor in every session
	// detectors is the union of the detectors' reports it acts on.
	detectors func(r anchorReports) map[int]int
}

// runsPerCommit is the runs a design spends per tested commit with k new
// commits a session.
func (d anchorDesign) runsPerCommit(k int) float64 {
	targets := k + 1
	if d.anchor {
		targets++
	}
	return float64(d.rounds*targets) / float64(k)
}

// anchorSizes are the planted steps. A report must be at the step's
// point: watch bisects between the two tested commits a change is
// reported between, so a report one commit off is a false one.
var anchorSizes = []float64{0.02, 0.05, 0.10, 0.30}

// anchorTally counts one cell of the table.
type anchorTally struct {
	found, total [4]int
	reports      int
	matched      int
	points       int
	delays       []float64 // of the steps found: points tested after the step when first reported
}

// anchorReports are the points each detector reported a change into,
// over every cycle of a history (watch handles each once, when first
// reported, so a report that later moves is still acted on), each with
// the number of points tested after it when it was first reported.
type anchorReports struct {
	direct, chain, anchor map[int]int
}

// noteReport records a report of a change into point at, n points tested.
func noteReport(set map[int]int, at, n int) {
	if _, ok := set[at]; !ok {
		set[at] = n - 1 - at
	}
}

func union(sets ...map[int]int) map[int]int {
	out := map[int]int{}
	for _, s := range sets {
		for k, d := range s {
			if old, ok := out[k]; !ok || d < old {
				out[k] = d
			}
		}
	}
	return out
}

// simulateAnchor measures one history of n tested commits with planted
// steps, k new commits a session in rounds whole rounds with the
// reference and an anchor (commit 0), and runs the detectors after every
// session, as watch's cycles do: the direct test of each step and the
// chain detector (changes), and E-divisive over the ratios to the anchor.
func simulateAnchor(r *rand.Rand, n, k, rounds int, nz anchorNoise, jc JobConfig) (anchorReports, map[int]float64) {
	mu, truth := anchorLevels(r, n)
	rep := anchorReports{direct: map[int]int{}, chain: map[int]int{}, anchor: map[int]int{}}
	s := &history.Series{}
	drift, roundDrift := 0.0, make([]float64, rounds)
	runsOf := func(level float64) []float64 {
		out := make([]float64, rounds)
		for i := range out {
			out[i] = math.Exp(level + drift + roundDrift[i] + nz.run(r))
		}
		return out
	}
	compareRuns := func(a, b []float64) stats.Comparison {
		if len(a) >= stats.PairsNeeded(jc.Alpha) {
			return stats.ComparePaired(a, b, jc.Alpha)
		}
		return stats.CompareUnpaired(a, b, jc.Alpha)
	}
	for start := 0; start < n; {
		end := min(n, start+k)
		if start == 0 {
			end = 1 // the history starts with one commit
		}
		drift = ar1(r, drift, sessionDriftSD, sessionDriftCorr)
		prev := ar1(r, 0, roundDriftSD, 0) // a fresh start each session
		for i := range roundDrift {
			roundDrift[i] = prev
			prev = ar1(r, prev, roundDriftSD, roundDriftCorr)
		}
		var pred []float64
		if start > 0 {
			pred = runsOf(mu[start-1]) // the reference, re-measured
		}
		anchor := runsOf(mu[0])
		for i := start; i < end; i++ {
			cur := runsOf(mu[i])
			p := history.Point{Commit: gitrev.Commit{Hash: fmt.Sprintf("c%04d", i)}, Index: i}
			if pred != nil {
				c := compareRuns(pred, cur)
				p.Ref = s.Points[i-1].Commit.Hash
				p.Step, p.Lo, p.Hi, p.P = c.Change, c.Lo, c.Hi, c.P
				p.Level = s.Points[i-1].Level * (1 + c.Change/100)
				if p.P < jc.Alpha && math.Abs(p.Step) >= jc.Effect {
					noteReport(rep.direct, i, i+1)
				}
			} else {
				p.Level = stats.Median(cur)
			}
			s.Points = append(s.Points, p)
			if i == 0 {
				s.Points[i].Ratio = 1
			} else {
				c := compareRuns(anchor, cur)
				s.Points[i].Ratio, s.Points[i].RatioLo, s.Points[i].RatioHi = 1+c.Change/100, 1+c.Lo/100, 1+c.Hi/100
			}
			pred = cur
		}
		start = end
		// This cycle's detection, over the history so far.
		for _, sp := range changes(s, jc) {
			if _, ok := rep.direct[sp.To]; !ok {
				noteReport(rep.chain, sp.To, len(s.Points))
			}
		}
		for _, sp := range anchorChanges(s, jc) {
			noteReport(rep.anchor, sp.To, len(s.Points))
		}
	}
	return rep, truth
}

// anchorLevels returns n log levels with steps 30 to 50 points apart (the
// first after 20), sizes cycling through anchorSizes, up or down.
func anchorLevels(r *rand.Rand, n int) ([]float64, map[int]float64) {
	truth := map[int]float64{}
	for pos, k := 20+r.IntN(20), 0; pos < n-10; pos, k = pos+30+r.IntN(20), k+1 {
		size := anchorSizes[k%len(anchorSizes)]
		if r.IntN(2) == 0 {
			size = 1/(1+size) - 1
		}
		truth[pos] = size
	}
	mu := make([]float64, n)
	level := 0.0
	for i := range mu {
		if size, ok := truth[i]; ok {
			level += math.Log1p(size)
		}
		mu[i] = level
	}
	return mu, truth
}

func anchorSizeIndex(size float64) int {
	for k, z := range anchorSizes {
		if math.Abs(size-z) < 1e-9 || math.Abs(1/(1+size)-1-z) < 1e-9 {
			return k
		}
	}
	panic(size)
}

func evaluateAnchor(seed uint64, histories, n, k int, d anchorDesign, nz anchorNoise, jc JobConfig) anchorTally {
	var t anchorTally
	for h := range histories {
		r := rand.New(rand.NewPCG(seed, uint64(h)))
		rep, truth := simulateAnchor(r, n, k, d.rounds, nz, jc)
		reports := d.detectors(rep)
		t.points += n
		t.reports += len(reports)
		for at, size := range truth {
			i := anchorSizeIndex(size)
			t.total[i]++
			if d, ok := reports[at]; ok {
				t.found[i]++
				t.matched++
				t.delays = append(t.delays, float64(d))
			}
		}
	}
	return t
}

// TestAnchorSimulation prints the table docs/changepoints.md quotes
// ("E-divisive over ratios to an anchor, as watch measures"); seeds are
// fixed, so it repeats exactly. About a minute:
//
//	PERFBOT_WATCH_ANCHOR_SIM=1 go test -run TestAnchorSimulation -v ./internal/watch
func TestAnchorSimulation(t *testing.T) {
	if os.Getenv("PERFBOT_WATCH_ANCHOR_SIM") != "1" {
		t.Skip("prints the anchor design's precision and recall; set PERFBOT_WATCH_ANCHOR_SIM=1")
	}
	const histories, n = 40, 240
	for _, k := range []int{1, 3} {
		for _, effect := range []float64{5, 2} {
			jc := JobConfig{Alpha: DefaultAlpha, Effect: effect}
			more := int(math.Round(6 * float64(k+2) / float64(k+1)))
			chainOnly := func(r anchorReports) map[int]int { return union(r.direct, r.chain) }
			designs := []anchorDesign{
				{name: "chain (watch today)", rounds: 6, detectors: chainOnly},
				{name: fmt.Sprintf("chain, %d rounds (the anchor's runs)", more), rounds: more, detectors: chainOnly},
				{name: "direct test alone", rounds: 6, detectors: func(r anchorReports) map[int]int { return r.direct }},
				{name: "chain + anchor E-divisive", rounds: 6, anchor: true, detectors: func(r anchorReports) map[int]int { return union(r.direct, r.chain, r.anchor) }},
				{name: "direct + anchor E-divisive", rounds: 6, anchor: true, detectors: func(r anchorReports) map[int]int { return union(r.direct, r.anchor) }},
				{name: "anchor E-divisive alone", rounds: 6, anchor: true, detectors: func(r anchorReports) map[int]int { return r.anchor }},
			}
			var b strings.Builder
			fmt.Fprintf(&b, "\n%d new commits a session, effect %g %%, alpha %g, %d histories of %d tested commits per row:\n\n", k, effect, jc.Alpha, histories, n)
			fmt.Fprintf(&b, "| design | runs per commit | noise per run | recall 2 %% | 5 %% | 10 %% | 30 %% | precision | false per 1000 commits | delay |\n|---|---|---|---|---|---|---|---|---|---|\n")
			for _, d := range designs {
				for _, nz := range anchorNoises {
					tl := evaluateAnchor(7, histories, n, k, d, nz, jc)
					fmt.Fprintf(&b, "| %s | %.1f | %s |", d.name, d.runsPerCommit(k), nz.name)
					for i := range anchorSizes {
						fmt.Fprintf(&b, " %.0f %% |", 100*float64(tl.found[i])/float64(tl.total[i]))
					}
					prec := 100.0
					if tl.reports > 0 {
						prec = 100 * float64(tl.matched) / float64(tl.reports)
					}
					fmt.Fprintf(&b, " %.0f %% | %.1f | %.0f |\n", prec, 1000*float64(tl.reports-tl.matched)/float64(tl.points), stats.Median(tl.delays))
				}
			}
			t.Log(b.String())
		}
	}
}
