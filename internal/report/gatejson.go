// The JSON report of a gate: a doc.Gate.

package report

import (
	"bytes"
	"encoding/json"
	"math"
	"time"

	"github.com/perfbot/perfbot/internal/gate"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/report/doc"
)

// GateDoc is the gate's JSON document.
func GateDoc(r *gate.Result) doc.Gate {
	code, _ := r.ExitStatus()
	d := doc.Gate{Version: doc.GateVersion, Outcome: string(r.Outcome), ExitStatus: code, Line: r.Line(), Reason: r.Reason,
		Job: r.Job, JobKey: r.JobKey,
		Base: doc.GateCommit{Commit: r.Base.Hash, Subject: r.Base.Subject}, Head: doc.GateCommit{Commit: r.Head.Hash, Subject: r.Head.Subject},
		Changed: append([]string{}, r.Changed...), Identical: r.Identical,
		Settings: doc.GateSettings{ThresholdPct: doc.Num(r.ThresholdPct), Alpha: doc.Num(r.Alpha), MaxRuns: r.MaxRuns,
			MaxTime: doc.Num(r.MaxTime.Seconds()), Alignment: string(r.AlignmentPolicy), Inconclusive: string(r.InconclusivePolicy)},
		Looks: r.Looks, Planned: append([]int{}, r.Planned...), Pairs: r.Pairs, NewRuns: r.NewRuns, Wall: seconds(r.Wall),
		Metrics: []doc.GateMetric{}, Notes: append([]string{}, r.Notes...),
		Runner: doc.GateRunner{Machine: r.Runner.Machine, CPUModel: r.Runner.CPUModel, CPUs: r.Runner.CPUs, Kernel: r.Runner.Kernel,
			Load: num(r.Runner.Load), PinnedCPU: r.Runner.Pinned},
	}
	for _, m := range r.Metrics {
		better := "lower"
		if m.Better == metric.HigherIsBetter {
			better = "higher"
		}
		d.Metrics = append(d.Metrics, doc.GateMetric{Metric: m.Metric, Unit: m.Unit, Better: better, Gated: m.Gated,
			ThresholdPct: doc.Num(m.ThresholdPct), Call: m.Call.String(), Pairs: m.Pairs,
			BaseMedian: num(m.BaseMedian), HeadMedian: num(m.HeadMedian), Change: num(m.Change), Lo: num(m.Lo), Hi: num(m.Hi),
			P: num(m.P), Nominal: num(m.Nominal), DetectablePct: num(m.DetectablePct), Reason: m.Reason})
	}
	if t := r.Triage; t != nil {
		d.Triage = &doc.GateTriage{Metric: t.Metric, Verdict: t.Verdict, Sentence: t.Sentence, Evidence: append([]string{}, t.Evidence...),
			Runs: t.Runs, Wall: seconds(t.Wall), Error: t.Err}
	}
	if q := r.Qualification; q != nil {
		d.Qualified = &doc.GateQualified{When: q.When.UTC().Format(time.RFC3339), Fit: q.Fit, FalsePositiveRate: doc.Num(q.FalsePositiveRate),
			Gates: q.Gates, DetectablePct: map[string]doc.Num{}}
		for k, v := range q.DetectablePct {
			d.Qualified.DetectablePct[k] = doc.Num(v)
		}
	}
	return d
}

func writeGateJSON(b *bytes.Buffer, r *gate.Result) error {
	enc := json.NewEncoder(b)
	enc.SetIndent("", "  ")
	return enc.Encode(GateDoc(r))
}

func seconds(d time.Duration) doc.Num { return doc.Num(math.Round(d.Seconds()*10) / 10) }

// num is x as a *doc.Num, nil (null) when not finite.
func num(x float64) *doc.Num {
	if !doc.Finite(x) {
		return nil
	}
	return doc.PNum(x)
}
