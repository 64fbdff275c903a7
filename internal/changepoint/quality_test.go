package changepoint

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// tally counts what the detectors found on simulated histories.
type tally struct {
	found, exact, total  [4]int // planted steps per size: found within ±2, at the index, all
	reports, matched     int    // reports on the step series, and those that found a step
	points               int    // points of the step series
	driftReports, drifts int    // reports on the drift series, drift series
	spikeReports, spikes int    // reports on the outlier series, disturbed sessions
	headHit, headTotal   [4]int // Head(k=1) at the first point after each step
	headFalse, headNull  int    // Head(k=1) at points without a change
}

const (
	simPoints = 500
	tolerance = 2 // a report within this many points of a planted step finds it
)

// head is Head as watch uses it: on the newest point, with the history
// from the last change point that Detect finds before it.
func head(s Series, at int, opt Options) (ChangePoint, bool) {
	from := 0
	if cps := Detect(s.Slice(0, at), opt); len(cps) > 0 {
		from = cps[len(cps)-1].Index
	}
	return Head(s.Slice(from, at+1), 1, opt)
}

func sizeIndex(size float64) int {
	for k, z := range stepSizes {
		if math.Abs(size-z) < 1e-9 || math.Abs(1/(1+size)-1-z) < 1e-9 {
			return k
		}
	}
	panic(size)
}

// evaluate runs nSeries series of each kind (steps, drift, outliers)
// through Detect and Head.
func evaluate(f form, nz noise, seed uint64, nSeries int, opt Options) tally {
	var t tally
	for sn := range nSeries {
		r := rand.New(rand.NewPCG(seed, uint64(sn)))
		mu, ts := stepLevels(r, simPoints, sn)
		s := history(r, mu, f, nz, nil)
		cps := Detect(s, opt)
		t.points += s.Len()
		t.reports += len(cps)
		used := make([]bool, len(cps))
		for _, tr := range ts {
			k := sizeIndex(tr.size)
			t.total[k]++
			for c, cp := range cps {
				if !used[c] && abs(cp.Index-tr.at) <= tolerance && (cp.Change > 0) == (tr.size > 0) {
					used[c] = true
					t.found[k]++
					t.matched++
					if cp.Index == tr.at {
						t.exact[k]++
					}
					break
				}
			}
			t.headTotal[k]++
			if cp, ok := head(s, tr.at, opt); ok && (cp.Change > 0) == (tr.size > 0) {
				t.headHit[k]++
			}
		}
	nulls:
		for q := 60; q < s.Len(); q += 23 {
			for _, tr := range ts {
				// Until E-divisive has MinSize points after a change the
				// head is still at the new level: not a null.
				if q >= tr.at && q < tr.at+10 {
					continue nulls
				}
			}
			t.headNull++
			if _, ok := head(s, q, opt); ok {
				t.headFalse++
			}
		}

		s = history(r, driftLevels(simPoints, 150, 200, 0.10), f, nz, nil)
		t.drifts++
		t.driftReports += len(Detect(s, opt))

		disturbed := map[int]bool{}
		for k := range 5 {
			disturbed[50+100*k+r.IntN(50)] = true
		}
		s = history(r, make([]float64, simPoints), f, nz, disturbed)
		t.spikes += len(disturbed)
		t.spikeReports += len(Detect(s, opt))
	}
	return t
}

func abs(x int) int { return max(x, -x) }

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100*float64(a)/float64(b))
}

func (t tally) precision() float64 {
	if t.reports == 0 {
		return 1
	}
	return float64(t.matched) / float64(t.reports)
}

func (t tally) recall(k int) float64 { return float64(t.found[k]) / float64(t.total[k]) }

// detectRow and headRow are the Markdown rows of the two tables.
func (t tally) detectRow(f form, nz noise) string {
	row := []string{formNames[f], nz.name}
	for k := range stepSizes {
		row = append(row, fmt.Sprintf("%s (%s)", pct(t.found[k], t.total[k]), pct(t.exact[k], t.total[k])))
	}
	row = append(row,
		fmt.Sprintf("%.0f %%", 100*t.precision()),
		fmt.Sprintf("%.1f", 1000*float64(t.reports-t.matched)/float64(t.points)),
		fmt.Sprintf("%.2f", float64(t.driftReports)/float64(t.drifts)),
		fmt.Sprintf("%.2f", float64(t.spikeReports)/float64(t.spikes)))
	return "| " + strings.Join(row, " | ") + " |"
}

func (t tally) headRow(f form, nz noise) string {
	row := []string{formNames[f], nz.name}
	for k := range stepSizes {
		row = append(row, pct(t.headHit[k], t.headTotal[k]))
	}
	row = append(row, fmt.Sprintf("%.1f", 1000*float64(t.headFalse)/float64(t.headNull)))
	return "| " + strings.Join(row, " | ") + " |"
}

// TestQuality checks precision and recall on simulated histories with known
// truth at CV 2 % per run (quiet machine), 10 runs per commit and
// session, with the default options. Seeds are fixed: the test is
// deterministic. The bounds leave a margin under the figures of
// docs/changepoints.md.
func TestQuality(t *testing.T) {
	nz := noises[1]
	for _, tc := range []struct {
		f         form
		precision float64
		recall    [4]float64 // per step size: 2, 5, 10, 30 %
		drift     float64    // most reports per drift series
		spike     float64    // most reports per disturbed session
		head      [4]float64 // Head(k=1) detections per step size
	}{
		{f: steady, precision: 0.95, recall: [4]float64{0.9, 0.95, 0.95, 0.95}, drift: 0.5, spike: 0.02, head: [4]float64{0, 0.95, 0.95, 0.95}},
		{f: anchored, precision: 0.95, recall: [4]float64{0.75, 0.95, 0.95, 0.95}, drift: 0.2, spike: 0.02, head: [4]float64{0, 0.75, 0.95, 0.95}},
		{f: chain, precision: 0.95, recall: [4]float64{0, 0.6, 0.95, 0.95}, drift: 0.3, spike: 0.1, head: [4]float64{0, 0.6, 0.95, 0.95}},
	} {
		t.Run(formNames[tc.f], func(t *testing.T) {
			ty := evaluate(tc.f, nz, 1, 24, Options{})
			if p := ty.precision(); p < tc.precision {
				t.Errorf("precision %.2f < %.2f", p, tc.precision)
			}
			for k, size := range stepSizes {
				if r := ty.recall(k); r < tc.recall[k] {
					t.Errorf("recall of %.0f %% steps %.2f < %.2f", 100*size, r, tc.recall[k])
				}
				if h := float64(ty.headHit[k]) / float64(ty.headTotal[k]); h < tc.head[k] {
					t.Errorf("Head detects %.0f %% steps at once in %.2f < %.2f", 100*size, h, tc.head[k])
				}
			}
			if d := float64(ty.driftReports) / float64(ty.drifts); d > tc.drift {
				t.Errorf("%.2f reports per drift series > %.2f", d, tc.drift)
			}
			if s := float64(ty.spikeReports) / float64(ty.spikes); s > tc.spike {
				t.Errorf("%.2f reports per disturbed session > %.2f", s, tc.spike)
			}
			if f := float64(ty.headFalse) / float64(ty.headNull); f > 0.01 {
				t.Errorf("Head false alarms %.3f > 0.01", f)
			}
		})
	}
}

// TestQualityTable prints the precision/recall tables of
// docs/changepoints.md. It takes a few seconds:
//
//	CHANGEPOINT_TABLE=1 go test ./internal/changepoint -run TestQualityTable -v
func TestQualityTable(t *testing.T) {
	if os.Getenv("CHANGEPOINT_TABLE") == "" {
		t.Skip("set CHANGEPOINT_TABLE=1 to print the precision/recall table")
	}
	const nSeries = 24
	var det, head []string
	for f := range numForms {
		for _, nz := range noises {
			ty := evaluate(f, nz, 1, nSeries, Options{})
			det = append(det, ty.detectRow(f, nz))
			if f != chainED {
				head = append(head, ty.headRow(f, nz))
			}
		}
	}
	fmt.Printf("Detect, default options, %d series of %d points per row (%d planted steps per size):\n\n", nSeries, simPoints, nSeries*6/4)
	fmt.Println("| input | noise per run | recall 2 % (exact) | 5 % | 10 % | 30 % | precision | false per 1000 points | reports per drift | reports per disturbed session |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	fmt.Println(strings.Join(det, "\n"))
	fmt.Printf("\nHead, k = 1, at the first point after each planted step, and at points without a change:\n\n")
	fmt.Println("| input | noise per run | 2 % | 5 % | 10 % | 30 % | false alarms per 1000 heads |")
	fmt.Println("|---|---|---|---|---|---|---|")
	fmt.Println(strings.Join(head, "\n"))
}
