// The triage of a regression the gate found.

package gate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/triage"
	"github.com/perfbot/perfbot/internal/verdict"
)

// minTriageTime is the least time left in the budget for a triage to be
// worth starting (its plain experiment alone takes 20 runs or more).
const minTriageTime = 10 * time.Second

// triageRegression triages the gate's worst regressed metric before the
// deadline and puts its answer in res: an alignment artifact turns the
// outcome into Alignment; any other verdict, or a triage that did not
// finish, leaves the regression standing.
func triageRegression(ctx context.Context, cfg Config, env measure.Env, res *Result, deadline time.Time) {
	var worst *Metric
	for i, m := range res.Metrics {
		if m.Gated && m.Call == Regressed && (worst == nil || m.Worse()/m.ThresholdPct > worst.Worse()/worst.ThresholdPct) {
			worst = &res.Metrics[i]
		}
	}
	if worst == nil {
		return
	}
	res.Triage = &Triage{Metric: worst.Metric, Verdict: verdict.None}
	if left := time.Until(deadline); left < minTriageTime {
		res.Triage.Err = fmt.Sprintf("no time left for it within max_time %s (%s left)", res.MaxTime, left.Round(time.Second))
		return
	}
	tc := triage.Config{Env: env, Job: cfg.Job, Base: res.Base.Hash, Changed: res.Head.Hash, Metric: worst.Metric,
		EffectPct: math.Min(worst.ThresholdPct, 50), Seed: cfg.Seed, Log: cfg.Log}
	if err := tc.Check(); err != nil {
		res.Triage.Err = err.Error()
		return
	}
	tctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	start := time.Now()
	tr, err := triage.Run(tctx, tc)
	res.Triage.Wall = time.Since(start)
	if err != nil {
		if tctx.Err() != nil && ctx.Err() == nil {
			res.Triage.Err = fmt.Sprintf("it did not finish within max_time %s (its runs are stored: a rerun resumes it)", res.MaxTime)
		} else {
			res.Triage.Err = err.Error()
		}
		return
	}
	applyTriage(res, tr)
}

// applyTriage puts a triage's verdict and evidence in res: an alignment
// artifact (text or data) turns a regression into Alignment.
func applyTriage(res *Result, tr *triage.Result) {
	t := res.Triage
	if t == nil {
		t = &Triage{Metric: tr.Metric}
		res.Triage = t
	}
	t.Verdict, t.Sentence, t.Runs = tr.Verdict, tr.Sentence, tr.Runs
	for _, e := range tr.Experiments {
		if slices.Contains(tr.DecidedBy, e.Name) {
			t.Evidence = append(t.Evidence, fmt.Sprintf("%s (%s): %s, %s [%s, %s]: %s", e.Name, e.Title, e.Outcome, Pct(e.Change), Pct(e.Lo), Pct(e.Hi), e.Reason))
		}
	}
	for _, s := range tr.Suspects {
		if !tr.Verdict.IsArtifact() {
			break
		}
		t.Evidence = append(t.Evidence, fmt.Sprintf("suspect %s %s (%s): offset in its cache line %d -> %d", s.Kind, s.Name, s.Section, s.OffBase, s.OffChanged))
		break
	}
	if res.Outcome == Regression && tr.Verdict.IsArtifact() {
		// The triage speaks for its metric: another regressed metric,
		// not triaged, keeps the gate failing.
		var others []string
		for _, m := range res.Metrics {
			if m.Gated && m.Call == Regressed && m.Metric != t.Metric {
				others = append(others, m.Metric)
			}
		}
		if len(others) == 0 {
			res.Outcome = Alignment
		} else {
			res.Notes = append(res.Notes, fmt.Sprintf("%s is an alignment artifact, but %s regressed too and was not triaged: the gate fails on %s", t.Metric, strings.Join(others, ", "), strings.Join(others, ", ")))
		}
	}
	if res.Outcome == Regression && !tr.Verdict.IsRegression() {
		res.Notes = append(res.Notes, fmt.Sprintf("the triage says %s, not a real regression nor an alignment artifact: the gate's own runs stand", tr.Verdict))
	}
}
