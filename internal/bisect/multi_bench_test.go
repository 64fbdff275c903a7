package bisect

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestStateV1 resumes states saved by the one-culprit perfbot (version 1):
// one in the middle of its steps goes on, names the culprit and then
// searches the ranges it leaves; a finished one prints its result again,
// as it was, without a run.
func TestStateV1(t *testing.T) {
	h := newHistory(20, map[int]float64{5: math.Log(1.3)}, nil, nil)
	load := func(name string) *State {
		data, err := os.ReadFile("testdata/state_v1_" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		st := new(State)
		if err := json.Unmarshal(data, st); err != nil || st.Version != 1 {
			t.Fatalf("%s: version %d, %v", name, st.Version, err)
		}
		return st
	}
	st := load("steps")
	stepsBefore := len(st.Result.Steps)
	m := newSim(h, 2)
	r, err := bisectSim(t, h, m, options{Resume: st})
	if err != nil {
		t.Fatal(err)
	}
	if culpritPos(r, h) != 5 || !r.Found() || len(r.Culprits) != 1 || len(r.Ranges) < 2 || r.Ranges[0].Kind != RangeMain {
		logSteps(t, r)
		t.Errorf("resumed v1 steps: culprit %d, %d culprits, %d ranges", culpritPos(r, h), len(r.Culprits), len(r.Ranges))
	}
	if r.Steps[stepsBefore-1].Range != 0 || len(r.Steps) <= stepsBefore {
		t.Errorf("the saved steps were not kept and continued: %d steps, %d before", len(r.Steps), stepsBefore)
	}

	st = load("done")
	m = newSim(h, 2)
	r, err = bisectSim(t, h, m, options{Resume: st})
	if err != nil {
		t.Fatal(err)
	}
	if m.taken != 0 || culpritPos(r, h) != 5 || !r.Found() || len(r.Culprits) != 1 || len(r.Ranges) != 1 || r.Culprits[0].Check == nil {
		t.Errorf("finished v1: took %d runs, culprit %d, %d culprits, %d ranges", m.taken, culpritPos(r, h), len(r.Culprits), len(r.Ranges))
	}
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[len(r.Notes)-1], "earlier perfbot") {
		t.Errorf("notes %q do not say the state is an old one", r.Notes)
	}
}

// BenchmarkCulprits reports what looking for every culprit costs on
// simulated 64-commit histories with one, two and three regressions (+15
// to +35 % each, at random places; 3 % noise, 5 % outliers, slow drift,
// and bursts of load where named), against the single-culprit search
// (MaxCulprits 1): runs in all, runs until the first culprit is confirmed,
// runs after it, culprits named, how often exactly the true set is named,
// and how often a confirmed culprit is not a true one.
//
//	go test ./internal/bisect -run '^$' -bench Culprits -benchtime 300x
func BenchmarkCulprits(b *testing.B) {
	for _, sc := range []struct {
		name  string
		k     int
		opt   options
		noise func(*simMeasurer)
	}{
		{"1-change/first-only/quiet", 1, options{MaxCulprits: 1}, quiet},
		{"1-change/every/quiet", 1, options{}, quiet},
		{"2-changes/first-only/quiet", 2, options{MaxCulprits: 1}, quiet},
		{"2-changes/every/quiet", 2, options{}, quiet},
		{"3-changes/every/quiet", 3, options{}, quiet},
		{"1-change/every/bursts", 1, options{}, bursty},
		{"2-changes/every/bursts", 2, options{}, bursty},
		{"3-changes/every/bursts", 3, options{}, bursty},
	} {
		b.Run(sc.name, func(b *testing.B) {
			var runs, first, extra, named, exact, falseC float64
			for i := 0; i < b.N; i++ {
				truth := changes(int64(1000*sc.k+i), sc.k)
				h := newHistory(63, truth, nil, nil)
				m := newSim(h, int64(i))
				sc.noise(m)
				r, err := bisectSim(b, h, m, sc.opt)
				if err != nil {
					b.Fatal(err)
				}
				runs += float64(r.Runs)
				first += float64(r.FirstRuns)
				extra += float64(r.ExtraRuns())
				named += float64(len(r.Culprits))
				got := culpritSet(r, h)
				if slices.Equal(got, keys(truth)) {
					exact++
				}
				for _, p := range got {
					if _, ok := truth[p]; !ok {
						falseC++
						break
					}
				}
			}
			n := float64(b.N)
			b.ReportMetric(runs/n, "runs/op")
			b.ReportMetric(first/n, "first-runs/op")
			b.ReportMetric(extra/n, "extra-runs/op")
			b.ReportMetric(named/n, "culprits/op")
			b.ReportMetric(100*exact/n, "%exact")
			b.ReportMetric(100*falseC/n, "%false")
		})
	}
}
