package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/gate"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
	"github.com/perfbot/perfbot/internal/verdict"
)

// gateResult is an alignment artifact with every optional part: a
// triage, a qualification, a metric shown and not gated, NaN figures.
func gateResult() *gate.Result {
	return &gate.Result{Outcome: gate.Alignment, Job: "bench", JobKey: "k", AlignmentPolicy: job.PolicyPass, InconclusivePolicy: job.PolicyNeutral,
		Base: gitrev.Commit{Hash: strings.Repeat("a", 40), Subject: "base"}, Head: gitrev.Commit{Hash: strings.Repeat("b", 40), Subject: "head | *x*"},
		Looks: 1, Planned: []int{10, 20, 40, 60}, Pairs: 10, NewRuns: 20, ThresholdPct: 5, Alpha: 0.05, MaxRuns: 60, MaxTime: 15 * time.Minute,
		Metrics: []gate.Metric{
			{Gated: true, Unit: "ms", BaseMedian: 10, HeadMedian: 11.2, Decision: gate.Decision{Rule: gate.Rule{Metric: "text_ms", ThresholdPct: 5, Better: metric.LowerIsBetter},
				Call: gate.Regressed, Pairs: 10, Change: 12.4, Lo: 10.1, Hi: 14.9, P: 0.002, Nominal: 0.02, DetectablePct: 6.1}},
			{Unit: "KiB", BaseMedian: math.NaN(), HeadMedian: math.NaN(), Decision: gate.Decision{Rule: gate.Rule{Metric: "maxrss", ThresholdPct: 5},
				Change: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), DetectablePct: math.NaN()}},
		},
		Triage: &gate.Triage{Metric: "text_ms", Verdict: verdict.TextAlignment, Sentence: "an alignment artifact", Evidence: []string{"forced-alignment: same"}, Runs: 80},
		Runner: gate.Runner{Machine: "ci-1", CPUModel: "Some CPU", CPUs: 2, Kernel: "linux 6.1", Load: 1.5, Pinned: -1},
		Qualification: &gate.Qualification{When: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), FalsePositiveRate: 0.03, Gates: 200,
			DetectablePct: map[string]float64{"text_ms": 4}, Fit: true},
		Notes: []string{"a note"}}
}

// TestGateFormats: every format starts with the verdict line; the JSON
// document, optional parts included, matches docs/schema/gate.json.
func TestGateFormats(t *testing.T) {
	r := gateResult()
	line := r.Line()
	if !strings.HasPrefix(line, "alignment artifact (text alignment, not a real regression): text_ms +12.4 %") {
		t.Fatalf("line %q", line)
	}
	for _, f := range GateFormats {
		var b bytes.Buffer
		if err := WriteGate(&b, r, f); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		switch f {
		case FormatText:
			if !strings.HasPrefix(out, line+"\n") || !strings.Contains(out, "triage of text_ms: text alignment") || !strings.Contains(out, "qualification: fit for the gate") {
				t.Errorf("text:\n%s", out)
			}
		case FormatMarkdown:
			if !strings.HasPrefix(out, "**"+mdEscape(line)+"**\n") || !strings.Contains(out, "head \\| \\*x\\*") || !strings.Contains(out, "shown, not gated") {
				t.Errorf("markdown:\n%s", out)
			}
		case FormatJSON:
			schematest.ValidateJSON(t, "gate", b.Bytes())
			if !strings.Contains(out, `"outcome": "alignment-artifact"`) || !strings.Contains(out, `"exit_status": 0`) {
				t.Errorf("json:\n%s", out)
			}
		case FormatBMF:
			schematest.ValidateJSON(t, "bmf", b.Bytes())
			// An alignment artifact passes: no regression for Bencher.
			for _, want := range []string{`"text"`, `"latency"`, `"latency-change-pct"`, `"latency-regression"`} {
				if !strings.Contains(out, want) {
					t.Errorf("bmf: no %s:\n%s", want, out)
				}
			}
			if !strings.Contains(out, "\"latency-regression\": {\n      \"value\": 0\n") {
				t.Errorf("bmf: an alignment artifact that passes is a regression for Bencher:\n%s", out)
			}
		}
	}
	// A regression that fails the gate is 1 for Bencher.
	r.Outcome = gate.Regression
	var bb bytes.Buffer
	if err := WriteGate(&bb, r, FormatBMF); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(bb.String(), "\"latency-regression\": {\n      \"value\": 1\n") {
		t.Errorf("bmf of a failed gate:\n%s", bb.String())
	}
	r.Triage, r.Qualification, r.Outcome = nil, nil, gate.Unchanged
	var b bytes.Buffer
	if err := WriteGate(&b, r, FormatJSON); err != nil {
		t.Fatal(err)
	}
	schematest.ValidateJSON(t, "gate", b.Bytes())
}
