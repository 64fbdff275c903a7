package gate

import (
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/triage"
	"github.com/perfbot/perfbot/internal/verdict"
)

func regressed() *Result {
	return &Result{Outcome: Regression, AlignmentPolicy: job.PolicyPass, InconclusivePolicy: job.PolicyNeutral,
		Metrics: []Metric{{Gated: true, Decision: Decision{Rule: Rule{Metric: "text_ms", ThresholdPct: 5, Better: metric.LowerIsBetter},
			Call: Regressed, Change: 12.4, Lo: 10.1, Hi: 14.9, DetectablePct: 4}}}}
}

// TestTriageOutcome: a triage's alignment verdict turns a regression
// into an alignment artifact that passes, or fails by gate.alignment:
// fail; a real regression or another verdict leaves it failing.
func TestTriageOutcome(t *testing.T) {
	for _, tc := range []struct {
		v      verdict.Verdict
		policy job.Policy
		want   Outcome
		exit   int
	}{
		{verdict.TextAlignment, job.PolicyPass, Alignment, ExitPass},
		{verdict.DataAlignment, job.PolicyPass, Alignment, ExitPass},
		{verdict.TextAlignment, job.PolicyFail, Alignment, ExitRegression},
		{verdict.RealRegression, job.PolicyPass, Regression, ExitRegression},
		{verdict.Inconclusive, job.PolicyPass, Regression, ExitRegression},
		{verdict.NoChange, job.PolicyPass, Regression, ExitRegression},
	} {
		res := regressed()
		res.AlignmentPolicy = tc.policy
		applyTriage(res, &triage.Result{Verdict: tc.v, Metric: "text_ms", Sentence: "because",
			DecidedBy:   []triage.ExperimentName{triage.ForcedExperiment},
			Experiments: []triage.Experiment{{Name: triage.PlainExperiment}, {Name: triage.ForcedExperiment, Title: "aligned", Outcome: triage.OutcomeSame, Reason: "gone"}}})
		code, _ := res.ExitStatus()
		if res.Outcome != tc.want || code != tc.exit {
			t.Errorf("%s under %q: outcome %s exit %d; want %s exit %d", tc.v, tc.policy, res.Outcome, code, tc.want, tc.exit)
		}
		if len(res.Triage.Evidence) != 1 || !strings.HasPrefix(res.Triage.Evidence[0], "forced-alignment (aligned): same") {
			t.Errorf("%s: evidence %q; want the deciding experiment only", tc.v, res.Triage.Evidence)
		}
		if tc.want == Alignment && !strings.HasPrefix(res.Line(), "alignment artifact (") {
			t.Errorf("line %q", res.Line())
		}
	}
}

// TestTriageOneOfTwo: an alignment verdict on the worst metric does not
// pass a gate in which another metric regressed too (untriaged).
func TestTriageOneOfTwo(t *testing.T) {
	res := regressed()
	second := res.Metrics[0]
	second.Metric, second.Change = "b_ms", 6
	res.Metrics = append(res.Metrics, second)
	applyTriage(res, &triage.Result{Verdict: verdict.TextAlignment, Metric: "text_ms"})
	if code, _ := res.ExitStatus(); res.Outcome != Regression || code != ExitRegression {
		t.Errorf("outcome %s exit %d; want the regression of b_ms to stand", res.Outcome, code)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "b_ms regressed too") {
		t.Errorf("notes %q", res.Notes)
	}
}

// TestLine: the one-line verdicts, as the reports print them first.
func TestLine(t *testing.T) {
	res := regressed()
	if got, want := res.Line(), "regression: text_ms +12.4 % [+10.1 %, +14.9 %] beyond the 5 % threshold"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	res.Outcome = Pass
	res.Metrics[0].Call, res.Metrics[0].Change, res.Metrics[0].Lo, res.Metrics[0].Hi = Within, -0.3, -2.1, 0.5
	if got, want := res.Line(), "no regression: text_ms -0.3 % [-2.1 %, +0.5 %]; smallest detectable change here 4 %"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	res.Outcome, res.Pairs, res.Reason = Inconclusive, 60, "the run budget (max_runs 60) is spent"
	res.Metrics[0].Call = Undecided
	if got := res.Line(); !strings.HasPrefix(got, "inconclusive after 60 runs each: text_ms -0.3 %") || !strings.HasSuffix(got, "; the run budget (max_runs 60) is spent") {
		t.Errorf("got %q", got)
	}
}
