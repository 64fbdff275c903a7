package watch

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// What the fixed scheme calls the culprits it names: it does not triage.
const (
	fixedRegression  = "regression"
	fixedImprovement = "improvement"
)

// fixedFlag is the fixed scheme's threshold: a head whose mean moved by
// this much against the previous head is flagged (the job's effect).
const fixedFlag = 0.05

// fixedFigure runs the 0-day scheme over the growing branch: each cycle
// measures the new head beside the previous one (the job's 6 runs each, in
// whole interleaved rounds, as watch does), flags every metric whose mean
// moved by fixedFlag or more, and bisects each flagged head with a fixed 6
// runs per commit ("git bisect run": a commit is bad when its mean is past
// the midpoint of the ends' means; no check, no triage).
func fixedFigure(t *testing.T, repo *demo.Repo) *figure {
	ctx := context.Background()
	jobs, err := job.Load(repo.JobFile)
	if err != nil {
		t.Fatal(err)
	}
	j := jobs[0]
	cost := &costCounter{}
	fig := &figure{scheme: "fixed6 heads", cost: cost}
	start := time.Now()
	var prev gitrev.Commit
	for _, n := range figuresGrowth {
		growBranch(t, repo, n)
		before := cost.snapshot()
		found := fixedCycle(t, ctx, j, repo, prev, cost)
		fig.findings = append(fig.findings, found...)
		prev = gitrev.Commit{Hash: repo.Commits[n-1].Hash, Subject: repo.Commits[n-1].Subject}
		t.Logf("fixed6: cycle up to commit %d: %d findings; %d runs, %d builds", n, len(found), cost.runs-before.runs, cost.builds-before.builds)
	}
	fig.wall = time.Since(start)
	return fig
}

// fixedCycle measures the branch's head beside prev and bisects every
// flagged metric.
func fixedCycle(t *testing.T, ctx context.Context, j *job.Job, repo *demo.Repo, prev gitrev.Commit, cost *costCounter) []figFinding {
	s, err := measure.Open(ctx, j, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	list, err := s.Repo.FirstParents(ctx, "watched", 0)
	if err != nil {
		t.Fatal(err)
	}
	head := list[len(list)-1]
	var targets []measure.Target
	if prev.Hash != "" {
		targets = append(targets, measure.Target{Commit: prev})
	}
	targets = append(targets, measure.Target{Commit: head})
	cost.setPhase(phaseMeasure)
	out, err := measure.Measure(ctx, j, targets, measure.Options{Store: s.Store, Builder: s.Builder, CPU: -1,
		WholeRounds: true, Retry: true, Progress: cost})
	if err != nil {
		t.Fatal(err)
	}
	if prev.Hash == "" {
		return nil
	}
	infos, err := s.Store.Metrics(ctx, j.Key())
	if err != nil {
		t.Fatal(err)
	}
	samples, err := s.Store.Samples(ctx, j.Key(), []string{prev.Hash, head.Hash}, "")
	if err != nil {
		t.Fatal(err)
	}
	var found []figFinding
	for _, m := range infos {
		if metric.IsBuiltin(m.Name) {
			continue
		}
		a := sessionMean(samples[prev.Hash][m.Name], out)
		b := sessionMean(samples[head.Hash][m.Name], out)
		change := b/a - 1
		if !(math.Abs(change) >= fixedFlag) {
			continue
		}
		worse := (change > 0) == (m.Better != metric.HigherIsBetter)
		cost.setPhase(phaseBisect)
		res, err := bisect.Run(ctx, bisect.Config{Env: s.Env("none", cost, nil, nil), Job: j, Good: prev.Hash, Bad: head.Hash,
			Metric: m.Name, Improvement: !worse, Fixed: 6})
		if errors.Is(err, bisect.ErrNoChange) || errors.Is(err, bisect.ErrWrongDirection) {
			t.Logf("fixed6: %s %s..%s flagged at %+.1f%%: %v", m.Name, prev.Short(), head.Short(), 100*change, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if res.Culprit == nil {
			t.Logf("fixed6: %s %s..%s flagged at %+.1f%%: no culprit (%d candidates)", m.Name, prev.Short(), head.Short(), 100*change, len(res.Candidates))
			continue
		}
		verdict := fixedRegression
		if !worse {
			verdict = fixedImprovement
		}
		t.Logf("fixed6: %s %s..%s flagged at %+.1f%%: culprit %s in %d steps, %d runs", m.Name, prev.Short(), head.Short(), 100*change,
			res.Culprit.Short(), len(res.Steps), res.Runs)
		found = append(found, figFinding{culprit: res.Culprit.Hash, metric: m.Name, verdict: verdict, change: 100 * change,
			planted: plantedEffect(repo, res.Culprit.Hash)})
	}
	return found
}

// sessionMean is the mean of a commit's samples in the measurement's
// rounds.
func sessionMean(ss []store.Sample, out *measure.Outcome) float64 {
	sum, n := 0.0, 0
	for _, x := range ss {
		if x.Session == out.Session && slices.Contains(out.Rounds, x.Run) {
			sum += x.Value
			n++
		}
	}
	return sum / float64(n)
}
