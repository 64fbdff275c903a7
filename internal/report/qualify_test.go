package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/qualify"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

func qualifyResult(fit bool) *qualify.Result {
	at := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	r := &qualify.Result{Job: "bench", JobKey: "k", Commit: gitrev.Commit{Hash: "0123456789abcdef0123456789abcdef01234567"},
		Runner: store.Runner{Hostname: "ci-1", CPUModel: "Xeon", Kernel: "Linux 6.1 x86_64", NProc: 4}, CPU: -1, LoadStart: 0.5, LoadEnd: 1,
		Alpha: 0.05, Runs: 120, Pairs: 60, BudgetPairs: 60, Budget: "gate.max_runs 60", Gates: 200, FalsePositives: 1, FPLo: 0.0001, FPHi: 0.0275,
		MeanPairs: 12, Fit: fit, Started: at, Finished: at.Add(10 * time.Minute),
		Metrics: []qualify.Metric{{Name: "t_ms", Better: metric.LowerIsBetter, ThresholdPct: 5, NoisePct: 1.2, DetectablePct: 5.3, FormulaPct: 5.2},
			{Name: "ops", Better: metric.HigherIsBetter, ThresholdPct: 5, NoisePct: math.NaN(), DetectablePct: math.NaN(), FormulaPct: math.NaN()}},
		Slowdown: &qualify.Slowdown{Name: "slow", Rounds: 60, Gates: 200, Detected: 198, Sizes: []qualify.Size{{Metric: "t_ms", Change: 10.1, Lo: 9.8, Hi: 10.4}, {Metric: "ops", Change: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}}}}
	if !fit {
		r.FalsePositives, r.Advice = 30, []string{"pin the runs to one CPU"}
	}
	return r
}

// TestWriteQualify: every format starts with the verdict; JSON matches
// its schema, NaN figures as null.
func TestWriteQualify(t *testing.T) {
	for _, fit := range []bool{true, false} {
		for _, f := range QualifyFormats {
			var b bytes.Buffer
			if err := WriteQualify(&b, qualifyResult(fit), f); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if f == FormatJSON {
				schematest.ValidateJSON(t, "qualify", b.Bytes())
				if !strings.Contains(out, `"detectable_pct": null`) {
					t.Errorf("json: NaN not null:\n%s", out)
				}
				continue
			}
			want := "runner qualified: false positives 1/200 (0.5 % [0.0 %, 2.8 %]) at alpha 0.05; detectable t_ms 5.3 %, ops n/a\n"
			if !fit {
				want = "runner not fit for the gate: false positives 30/200"
			}
			if !strings.HasPrefix(out, want) || !strings.Contains(out, "198 of 200") || fit == strings.Contains(out, "What to do") {
				t.Errorf("%s, fit %v:\n%s", f, fit, out)
			}
		}
	}
	if err := WriteQualify(&bytes.Buffer{}, qualifyResult(true), FormatCSV); err == nil {
		t.Error("csv accepted")
	}
}
