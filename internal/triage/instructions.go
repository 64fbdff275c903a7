// Instruction counts as evidence: alignment moves time, not instructions.

package triage

import (
	"context"
	"fmt"
	"math"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
)

// Support says which verdict a piece of evidence supports. Its values are
// stable identifiers: JSON output relies on them.
type Support string

const (
	SupportsAlignment Support = "alignment" // the metric moved, the work did not
	SupportsReal      Support = "real"      // the work moved as much as the metric
	SupportsNeither   Support = "neither"   // the work moved, by less than the metric
)

// Thresholds of InstructionEvidence, as fractions of the metric's change.
const (
	// instrSame: instructions that changed by at most this fraction of
	// the metric's change "did not change".
	instrSame = 0.1
	// instrAsMuch: instructions that changed in the same direction by at
	// least this fraction of the metric's change changed "as much".
	instrAsMuch = 0.5
)

// InstructionEvidence compares the plain builds' instruction counts with
// the triaged metric's change, for a job that counts instructions
// (`builtin: instructions`): counts are blind to code and data alignment,
// so a metric that changed while the instructions did not points to an
// alignment artifact, and instructions that changed as much point to a
// real change. It supports the verdict, it never decides it.
type InstructionEvidence struct {
	Metric        string  // the job's instructions metric
	Base, Changed float64 // the plain builds' counts (median of their runs)
	ChangePct     float64 // the instructions' change, changed vs base
	MetricPct     float64 // the triaged metric's plain change
	Supports      Support
	Text          string // the line the reports print
}

// instructionEvidence reads the evidence from the plain builds' stored
// runs once the experiments are done; nil when the job counts no
// instructions, the triaged metric is the count itself, the plain
// comparison shows no change or a build stored no count. It reads only
// the store: the counts were taken with the plain builds' runs (by
// callgrind in runs of their own, at most measure.CallgrindRuns per
// build and reused from the store, or by perf beside each run).
func instructionEvidence(ctx context.Context, opt options, e *engine, base, changed gitrev.Commit) (*InstructionEvidence, error) {
	s := instructionMetric(opt.Job)
	if s == "" || s == e.res.Metric {
		return nil, nil
	}
	if e.plain == nil || e.plain.d.Decision != stats.Different {
		e.logf("instructions: no evidence: the plain comparison shows no change")
		return nil, nil
	}
	counts := [2]float64{}
	for i, c := range []gitrev.Commit{base, changed} {
		// The plain comparison's builds: the plain ones, or the
		// control variant of a data plan.
		vid := measure.VariantID(e.plain.ts[i].variant)
		ss, err := opt.Env.Store.Samples(ctx, opt.Job.Key(), []string{c.Hash}, vid)
		if err != nil {
			return nil, err
		}
		var xs []float64
		for _, x := range ss[c.Hash][s] {
			xs = append(xs, x.Value)
		}
		if len(xs) == 0 {
			e.logf("instructions: no evidence: the plain build of %s stored no count", c.Short())
			return nil, nil
		}
		counts[i] = stats.Median(xs)
	}
	return judgeInstructions(s, e.res.Metric, e.res.Better, counts[0], counts[1], e.res.Change), nil
}

// judgeInstructions weighs counts base and changed against the metric's
// change metricPct (percent) in the metric's direction better.
func judgeInstructions(name, m string, better metric.Better, base, changed, metricPct float64) *InstructionEvidence {
	ev := &InstructionEvidence{Metric: name, Base: base, Changed: changed, ChangePct: 100 * (changed/base - 1), MetricPct: metricPct}
	// More instructions is worse; a higher-is-better metric's worse
	// direction is down.
	worse := metricPct
	if better == metric.HigherIsBetter {
		worse = -metricPct
	}
	T, I := math.Abs(metricPct), math.Abs(ev.ChangePct)
	switch {
	case I <= instrSame*T:
		ev.Supports = SupportsAlignment
		ev.Text = fmt.Sprintf("%s changed %+.1f%%, %s did not (%+.3f%%, %.0f -> %.0f; instruction counts are blind to alignment): supports an alignment artifact",
			m, metricPct, name, ev.ChangePct, base, changed)
	case I >= instrAsMuch*T && (ev.ChangePct > 0) == (worse > 0):
		ev.Supports = SupportsReal
		ev.Text = fmt.Sprintf("%s changed %+.1f%% and %s as much (%+.2f%%, %.0f -> %.0f): the work itself changed, which alignment cannot do: supports a real change",
			m, metricPct, name, ev.ChangePct, base, changed)
	default:
		ev.Supports = SupportsNeither
		ev.Text = fmt.Sprintf("%s changed %+.1f%%, %s %+.2f%% (%.0f -> %.0f): the work changed, by less than %s or the other way; alignment may add to a real change",
			m, metricPct, name, ev.ChangePct, base, changed, m)
	}
	return ev
}

// instructionMetric is the name of the job's instructions metric, "" when
// it has none.
func instructionMetric(j *job.Job) string {
	for i := range j.Metrics {
		if j.Metrics[i].IsInstructions() {
			return j.Metrics[i].InstructionsName()
		}
	}
	return ""
}
