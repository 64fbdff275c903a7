// The simulated error rates and run costs of the decision procedure.

package triage

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/stats"
	"github.com/perfbot/perfbot/internal/verdict"
)

// scenario draws a model whose truth is want. adversarial scenarios break
// an assumption of the design (the layout diff sees every moved object,
// forced alignment aligns the hot code alike): any verdict but a real one
// is acceptable there, and their verdicts are not held to 90 %.
type scenario struct {
	name        string
	want        verdict.Verdict
	adversarial bool
	// floor is the least share of right verdicts (0: 90 %); a known limit
	// of the design has a lower one, and inconclusive for the rest.
	floor float64
	model func(r *rand.Rand) simModel
}

// simBase draws the parts every scenario shares: the noise of a stretch of
// real runs (simnoise_test.go), random starting classes, no layout
// effect.
func simBase(r *rand.Rand) simModel {
	m := simModel{baseText: r.Intn(4), baseData: r.Intn(4), aligned: r.Intn(4)}
	m.trace, m.traceScale = simTrace(r), 1
	return m
}

// slowClass makes one class of four slow by factor f.
func slowClass(c int, f float64) [4]float64 {
	var e [4]float64
	e[mod4(c)] = math.Log(f)
	return e
}

// dataSlow makes the data classes 16 mod 32 from c slow by factor f.
func dataSlow(c int, f float64) [4]float64 {
	var e [4]float64
	for k := range 4 {
		if mod4(k-c)%2 == 1 {
			e[k] = math.Log(f)
		}
	}
	return e
}

var scenarios = []scenario{
	{"identical builds", verdict.NoChange, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.identical = true
		return m
	}},
	{"code moved, no effect anywhere", verdict.NoChange, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.textShift = 1 + r.Intn(3)
		return m
	}},
	{"code moved, other offsets slow", verdict.NoChange, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.textShift = 2
		// The two commits' classes are fast; the other two are slow, so
		// layouts spread the figure but the change is none.
		m.text = slowClass(m.baseText+1, 1.3)
		m.text[mod4(m.baseText+3)] = math.Log(1.3)
		return m
	}},
	{"data moved, no effect", verdict.NoChange, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.dataShift = 1 + r.Intn(3)
		return m
	}},
	{"text alignment artifact", verdict.TextAlignment, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.textShift = 1 + r.Intn(3)
		m.aligned = m.baseText + 1 + r.Intn(3) // any class; both commits share it
		// The changed commit's class is slow, the base's is not.
		m.text = slowClass(m.baseText+m.textShift, 1.2+0.3*r.Float64())
		return m
	}},
	{"text artifact, data moved too", verdict.TextAlignment, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.textShift = 1 + r.Intn(3)
		m.dataShift = 1 + r.Intn(3)
		m.aligned = m.baseText + 1 + r.Intn(3)
		m.text = slowClass(m.baseText+m.textShift, 1.2+0.3*r.Float64())
		return m
	}},
	{"data alignment artifact", verdict.DataAlignment, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.dataShift = 1 + 2*r.Intn(2) // 16 or 48 bytes: flips the offset mod 32
		m.data = dataSlow(m.baseData, 1.2+0.3*r.Float64())
		return m
	}},
	{"real regression, nothing moved", verdict.RealRegression, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = math.Log(1.15 + 0.25*r.Float64())
		return m
	}},
	{"real regression, code moved", verdict.RealRegression, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = math.Log(1.25 + 0.1*r.Float64())
		m.textShift = 1 + r.Intn(3)
		m.text = slowClass(r.Intn(4), 1.1)
		return m
	}},
	{"real regression, data moved", verdict.RealRegression, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = math.Log(1.2 + 0.15*r.Float64())
		m.dataShift = 1 + r.Intn(3)
		m.data = slowClass(r.Intn(4), 1.1)
		return m
	}},
	{"small real regression, noisy host", verdict.RealRegression, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.traceScale = 2
		m.code = math.Log(1.10 + 0.05*r.Float64())
		return m
	}},
	{"real improvement", verdict.RealImprovement, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = -math.Log(1.15 + 0.25*r.Float64())
		return m
	}},
	{"real regression hidden by alignment", verdict.RealRegression, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = math.Log(1.2)
		m.textShift = 1
		m.text = slowClass(m.baseText, 1.2) // the base was slow, the changed commit moved out of it
		return m
	}},
	{"real regression hidden, strong layout effect", verdict.RealRegression, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = math.Log(1.3)
		m.textShift = 1
		m.text = slowClass(m.baseText, 1.43)
		return m
	}},
	{"masked: plain -9 %, real +50 %", verdict.RealRegression, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = math.Log(1.5)
		m.textShift = 1 + r.Intn(3)
		m.text = slowClass(m.baseText, 1.65)
		return m
	}},
	{"real regression hidden by data alignment", verdict.RealRegression, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = math.Log(1.2)
		m.dataShift = 1
		m.data = slowClass(m.baseData, 1.2)
		return m
	}},
	{"adversarial: data artifact the layout diff misses", verdict.DataAlignment, true, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.dataShift = 1 + 2*r.Intn(2)
		m.data = dataSlow(m.baseData, 1.2+0.3*r.Float64())
		m.dataBlind = true
		if r.Intn(2) == 0 {
			m.textShift = 1 + r.Intn(3) // code moved too, harmlessly
		}
		return m
	}},
	{"adversarial: forced alignment misses the text shift", verdict.TextAlignment, true, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.textShift = 1 + r.Intn(3)
		m.alignMiss = m.textShift
		m.aligned = m.baseText
		m.text = slowClass(m.baseText+m.textShift, 1.2+0.3*r.Float64())
		return m
	}},
	// The restore padding moves the whole section, not only the suspect:
	// in the demo the padded build is about 2 % slower than the base. The
	// source patch puts the base's layout back, with no residue; where
	// none can be made, or it does not restore, the padding is measured,
	// and its residue leaves about a quarter of such triages inconclusive
	// (docs/triage.md, Limits): a known limit, held to 60 %. (Last, so
	// that the scenarios before them keep their random draws.)
	{"data artifact, padding residue 2 %", verdict.DataAlignment, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.dataShift = 1 + 2*r.Intn(2)
		m.data = dataSlow(m.baseData, 1.2+0.3*r.Float64())
		m.padResidue = math.Log(1.02)
		return m
	}},
	{"data artifact, residue 2 %, no source patch", verdict.DataAlignment, false, 0.6, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.dataShift = 1 + 2*r.Intn(2)
		m.data = dataSlow(m.baseData, 1.2+0.3*r.Float64())
		m.padResidue = math.Log(1.02)
		m.noPatch = true
		return m
	}},
	{"data artifact, residue 2 %, patch does not restore", verdict.DataAlignment, false, 0.6, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.dataShift = 1 + 2*r.Intn(2)
		m.data = dataSlow(m.baseData, 1.2+0.3*r.Float64())
		m.padResidue = math.Log(1.02)
		m.patchBroken = true
		return m
	}},
	{"real regression, data moved, residue 2 %", verdict.RealRegression, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.code = math.Log(1.2 + 0.15*r.Float64())
		m.dataShift = 1 + r.Intn(3)
		m.data = slowClass(r.Intn(4), 1.1)
		m.padResidue = math.Log(1.02)
		return m
	}},
	// An unused object removed: the patched build loads the base's code
	// and data, so the restore is decided by identity once its first look
	// agrees. The guard: a real change outside the artifacts (a script),
	// which the patched build has too, must not pass for none.
	{"data artifact, unused object removed (patched = base)", verdict.DataAlignment, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.dataShift = 1 + 2*r.Intn(2)
		m.data = dataSlow(m.baseData, 1.2+0.3*r.Float64())
		m.padResidue = math.Log(1.02)
		m.patchIdentical = true
		return m
	}},
	{"unused object removed, real +8-15 % in a script", verdict.RealRegression, false, 0, func(r *rand.Rand) simModel {
		m := simBase(r)
		m.dataShift = 1 + r.Intn(3)
		m.data = slowClass(r.Intn(4), 1.1)
		m.patchIdentical = true
		m.script = math.Log(1.08 + 0.07*r.Float64())
		return m
	}},
}

// simCases is the number of triages per scenario: $PERFBOT_TRIAGE_SIM,
// else 30 (-short) or 60.
func simCases(t *testing.T) int {
	if v := os.Getenv("PERFBOT_TRIAGE_SIM"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("PERFBOT_TRIAGE_SIM=%q: want a number of triages per scenario", v)
		}
		return n
	}
	if testing.Short() {
		return 30
	}
	return 60
}

// TestSimulatedErrorRates runs the decision procedure on simulated cases
// of known truth, with the noise of real runs: a real verdict where the
// change is not real is a false positive, anything else where it is real
// a false negative. Both rates must stay under 5 %, each scenario's own
// verdict must be right in at least 90 % of its cases (adversarial ones
// excepted, known limits at their floor) and never the opposite direction. It prints, per scenario,
// the verdicts and the runs against the fixed design's. The figures in
// docs/triage.md come from
//
//	PERFBOT_TRIAGE_SIM=200 go test -run SimulatedErrorRates -v ./internal/triage/
func TestSimulatedErrorRates(t *testing.T) {
	cases := simCases(t)
	simDesignFromEnv(t)
	var realN, realMiss, notRealN, falseReal, advN, advReal, advScen int
	totalRuns := 0.0
	for si, sc := range scenarios {
		r := rand.New(rand.NewSource(int64(1000 + si)))
		counts := map[verdict.Verdict]int{}
		var runs, fixed []float64
		over := 0
		for i := range cases {
			res, _ := simTriage(t, sc.model(r), int64(si*100000+i))
			counts[res.Verdict]++
			runs = append(runs, float64(res.Runs))
			fixed = append(fixed, float64(res.FixedRuns))
			if 2*res.Runs > res.FixedRuns {
				over++
			}
			switch {
			case sc.adversarial:
				advN++
				if res.Verdict.IsReal() {
					advReal++
				}
			case sc.want.IsReal():
				realN++
				if !res.Verdict.IsReal() {
					realMiss++
				}
				if res.Verdict.IsReal() && res.Verdict != sc.want {
					t.Errorf("%s: case %d: verdict %s, the opposite direction (%s)", sc.name, i, res.Verdict, res.Sentence)
				}
			default:
				notRealN++
				if res.Verdict.IsReal() {
					falseReal++
				}
			}
		}
		right := float64(counts[sc.want]) / float64(cases)
		if sc.adversarial {
			advScen++
		} else {
			totalRuns += mean(runs) * float64(cases)
		}
		t.Logf("%-48s want %-16s right %5.1f%%  runs mean %5.1f median %3.0f p90 %3.0f  fixed %3.0f  over half %4.1f%%  %s",
			sc.name, sc.want, 100*right, mean(runs), quantile(runs, 0.5), quantile(runs, 0.9), mean(fixed), 100*float64(over)/float64(cases), verdictCounts(counts))
		floor := sc.floor
		if floor == 0 {
			floor = 0.9
		}
		if right < floor && !sc.adversarial {
			t.Errorf("%s: right verdict in %.1f%% of %d cases, want >= %.0f%% (%v)", sc.name, 100*right, cases, 100*floor, counts)
		}
	}
	fp := float64(falseReal) / float64(notRealN)
	fn := float64(realMiss) / float64(realN)
	t.Logf("mean runs over the scenarios that are not adversarial: %.1f", totalRuns/float64(cases*(len(scenarios)-advScen)))
	t.Logf("false positives %d/%d = %.2f%%, false negatives %d/%d = %.2f%%; adversarial cases called real: %d/%d",
		falseReal, notRealN, 100*fp, realMiss, realN, 100*fn, advReal, advN)
	if fp >= 0.05 {
		t.Errorf("false-positive rate %.1f%%, want < 5%%", 100*fp)
	}
	if fn >= 0.05 {
		t.Errorf("false-negative rate %.1f%%, want < 5%%", 100*fn)
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// verdictCounts prints counts in the order of verdict.All.
func verdictCounts(c map[verdict.Verdict]int) string {
	var parts []string
	for _, v := range verdict.All {
		if c[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", v, c[v]))
		}
	}
	return strings.Join(parts, " ")
}

// simDesignFromEnv sets the looks' design from $PERFBOT_TRIAGE_DESIGN
// (words, applied in order: doubling for the old looks at 10, 20, 40 at
// Options.Alpha each; spend, finer, finest, obf; agree=LEVEL; nopatch for
// the restore by padding only, as before the source patch), to compare
// designs.
func simDesignFromEnv(t *testing.T) {
	v := os.Getenv("PERFBOT_TRIAGE_DESIGN")
	if v == "" {
		return
	}
	old, oldAgree, oldPatches := design, agreeLevel, usePatches
	t.Cleanup(func() { design, agreeLevel, usePatches = old, oldAgree, oldPatches })
	for _, w := range strings.Split(v, ",") {
		switch {
		case w == "doubling":
			design = seqDesign{}
		case w == "spend":
			design.spend = true
		case w == "finer":
			design.finer = true
		case w == "finest":
			design.finest = true
		case w == "obf":
			design.spending = stats.OBrienFlemingSpending
		case w == "nopatch":
			usePatches = false
		case strings.HasPrefix(w, "agree="):
			agreeLevel, _ = strconv.ParseFloat(strings.TrimPrefix(w, "agree="), 64)
		default:
			t.Fatalf("PERFBOT_TRIAGE_DESIGN: unknown word %q", w)
		}
	}
	t.Logf("design %+v, agree level %v, source patches %v", design, agreeLevel, usePatches)
}
