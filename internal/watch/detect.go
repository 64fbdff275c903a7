package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/triage"
)

// detect rebuilds the histories of the job's own metrics on a branch and
// handles every change point not handled before.
func (w *Watcher) detect(ctx context.Context, s *Place, jc JobConfig, j *job.Job, h hist, branch string, list []gitrev.Commit, rep *CycleReport) error {
	infos, err := s.Store.Metrics(ctx, j.Key())
	if err != nil {
		return err
	}
	for _, m := range infos {
		if metric.IsBuiltin(m.Name) {
			continue // perfbot's monitors are reported beside, not watched
		}
		// Through the memo: a cycle compares only the commits it tested,
		// for the steps and for the ratios to the anchor.
		memo := w.memo(s.Store)
		series, err := memo.Build(ctx, s.Store, j.Key(), h.id, m.Name, list, jc.Alpha)
		if err != nil {
			return err
		}
		if jc.Anchor {
			anchor, err := history.Anchor(ctx, s.Store, j.Key(), h.id)
			if err != nil {
				return err
			}
			if anchor != "" {
				if err := memo.Ratios(ctx, s.Store, series, anchor, jc.Alpha); err != nil {
					return err
				}
			}
		}
		for _, sp := range changes(series, jc) {
			a, b := series.Points[sp.From], series.Points[sp.To]
			key := history.ChangeKey(j.Key(), h.id, m.Name, a.Commit.Hash, b.Commit.Hash)
			if _, err := s.Store.GetState(ctx, history.ChangeKind, key); err == nil {
				continue
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			w.logf("watch: %s%s: %s changes by %+.1f%% between %s and %s", j.Name, h.suffix(), m.Name, 100*(b.Level/a.Level-1), a.Commit.Short(), b.Commit.Short())
			// Better is the direction of the metric; a step toward it is
			// an improvement, which bisection searches for as such.
			improvement := (b.Level < a.Level) == (m.Better != metric.HigherIsBetter)
			fs, err := w.explain(ctx, s, jc, j, h, branch, m.Name, m.Better, improvement, a.Commit, b.Commit, key)
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				// One change that cannot be explained does not stop the
				// others; the next cycle tries it again.
				rep.Errors = append(rep.Errors, fmt.Errorf("job %s: %s %s..%s: %w", j.Name, m.Name, a.Commit.Short(), b.Commit.Short(), err))
				continue
			}
			var culprits []string
			for _, f := range fs {
				if err := w.record(ctx, s.Store, f); err != nil {
					return err
				}
				rep.Findings = append(rep.Findings, f.Culprit)
				culprits = append(culprits, f.Culprit)
			}
			if err := s.Store.PutState(ctx, history.ChangeKind, key, []byte(strings.Join(culprits, " "))); err != nil {
				return err
			}
		}
	}
	return nil
}

// explain finds the culprits of a change between two tested commits (the
// later one when they are neighbours, else by bisection, which names every
// culprit of the range and descends into merged branches), triages each,
// and returns their findings; none when the bisection confirms no culprit.
func (w *Watcher) explain(ctx context.Context, s *Place, jc JobConfig, j *job.Job, h hist, branch, metricName string, better metric.Better,
	improvement bool, a, b gitrev.Commit, key string) ([]*finding.Finding, error) {
	path, err := s.Repo.FirstParentPath(ctx, a.Hash, b.Hash)
	if err != nil {
		return nil, err
	}
	parents, err := s.Repo.Parents(ctx, b.Hash)
	if err != nil {
		return nil, err
	}
	// Neighbours name the later commit, unless it is a merge: then the
	// bisection looks inside the merged branch.
	if len(path) == 1 && len(parents) < 2 {
		f, err := w.triage(ctx, s, jc, j, branch, metricName, a, b, fmt.Sprintf("%s was the first commit tested after %s%s", b.Short(), a.Short(), h.suffix()))
		return []*finding.Finding{f}, err
	}
	env, err := w.env(ctx, s, j, jc)
	if err != nil {
		return nil, err
	}
	// The watch triages each culprit itself, for its finding.
	res, err := bisect.Run(ctx, bisect.Config{Env: env, Job: j, Good: a.Hash, Bad: b.Hash, Metric: metricName, Mode: bisect.Mode(h.name),
		Preset: jc.Preset, Improvement: improvement, Alpha: jc.Alpha, EffectPct: jc.Effect, Seed: measure.SeedOf("watch", key),
		NoTriage: true, StateKey: "watch|" + key})
	if errors.Is(err, bisect.ErrNoChange) || errors.Is(err, bisect.ErrWrongDirection) {
		w.logf("watch: %s %s..%s: %v", metricName, a.Short(), b.Short(), err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	spans := res.SkipSpans()
	if !res.Found() && len(spans) == 0 {
		w.logf("watch: %s %s..%s: no confirmed culprit", metricName, a.Short(), b.Short())
		return nil, nil
	}
	var out []*finding.Finding
	for _, c := range res.Culprits {
		if c.Check != nil && !c.Check.Confirmed {
			continue
		}
		how := fmt.Sprintf("bisected %d commits between %s and %s%s (%d culprits, %d runs)", len(path), a.Short(), b.Short(), h.suffix(), len(res.Culprits), res.Runs)
		if len(c.Via) > 0 {
			how += fmt.Sprintf("; came in through merge %s", c.Via[0].Short())
		}
		if c.Interaction {
			how += "; neither side of the merge alone has the change: the merge is the culprit"
		}
		if c.Check != nil {
			how += "; " + c.Check.Reason
		}
		f, err := w.triage(ctx, s, jc, j, branch, metricName, c.Parent, c.Commit, how)
		if err != nil {
			return nil, err
		}
		f.BisectKey = "watch|" + key
		out = append(out, f)
	}
	// Only commits that do not build lie between the last commit that
	// built and the next one that does: the change is in one of them, or
	// in that next one. It is named, with the skipped commits, and triaged
	// against the last commit that built.
	for _, sp := range spans {
		skipped := make([]string, len(sp.Skipped))
		for i, c := range sp.Skipped {
			skipped[i] = c.Short()
		}
		how := fmt.Sprintf("bisected %d commits between %s and %s%s (%d runs): only commits that do not build (%s) lie between %s, the last commit that built, and %s, the first that builds after them; the change is in one of them or in %s, triaged against %s",
			len(path), a.Short(), b.Short(), h.suffix(), res.Runs, strings.Join(skipped, ", "), sp.Good.Short(), sp.First.Short(), sp.First.Short(), sp.Good.Short())
		w.logf("watch: %s: %s", metricName, how)
		f, err := w.triage(ctx, s, jc, j, branch, metricName, sp.Good, sp.First, how)
		if err != nil {
			return nil, err
		}
		for _, c := range sp.Skipped {
			f.Skipped = append(f.Skipped, c.Hash)
		}
		f.BisectKey = "watch|" + key
		out = append(out, f)
	}
	return out, nil
}

// env is the place's machine (or fleet) with the runs pinned where this cycle
// pins the job's (w.cpu), for bisect and triage.
func (w *Watcher) env(ctx context.Context, s *Place, j *job.Job, jc JobConfig) (measure.Env, error) {
	cpu, err := w.cpu(ctx, s, j, jc)
	if err != nil {
		return measure.Env{}, err
	}
	env := s.Env
	env.Progress, env.Wait = w.Progress, w.Wait
	env.Logf = func(format string, args ...any) { w.logf("watch: "+format, args...) }
	return env.Pinned(cpu), nil
}

// triage triages culprit against parent and builds the finding.
func (w *Watcher) triage(ctx context.Context, s *Place, jc JobConfig, j *job.Job, branch, metricName string,
	parent, culprit gitrev.Commit, how string) (*finding.Finding, error) {
	w.logf("watch: triage: %s against its parent %s, %s", culprit.Short(), parent.Short(), metricName)
	env, err := w.env(ctx, s, j, jc)
	if err != nil {
		return nil, err
	}
	var log bytes.Buffer
	run := triage.Run
	if s.Triage != nil {
		run = s.Triage
	}
	res, err := run(ctx, triage.Config{Env: env, Job: j, Base: parent.Hash, Changed: culprit.Hash, Metric: metricName,
		Alpha: jc.Alpha, EffectPct: jc.Effect, Log: &log})
	if err != nil {
		return nil, err
	}
	name, email, _ := s.Repo.Author(ctx, culprit.Hash)
	f := &finding.Finding{Culprit: culprit.Hash, Subject: culprit.Subject, Author: fmt.Sprintf("%s <%s>", name, email),
		Parent: parent.Hash, Branch: branch, Repo: j.Repo, Job: j.Name, Metric: metricName, Change: res.Change,
		Verdict: res.Verdict, Sentence: res.Sentence, Params: j.Params, Bisect: how, Found: time.Now(),
		Reproduce: []string{
			fmt.Sprintf("perfbot compare %s %s %s", j.File, parent.Short(), culprit.Short()),
			fmt.Sprintf("perfbot triage %s %s %s --metric %s", j.File, parent.Short(), culprit.Short(), metricName),
		}}
	f.Metrics = []finding.MetricChange{{Job: j.Name, Metric: metricName, Change: res.Change, Verdict: f.Verdict}}
	if len(res.Suspects) > 0 {
		f.LayoutCause = res.Suspects[0].Name + " in " + res.Suspects[0].Section
	}
	var tr, tj, tab bytes.Buffer
	_ = report.WriteTriage(&tr, res, report.TriageOptions{Format: "text"})
	f.Triage = tr.String()
	if report.WriteTriage(&tj, res, report.TriageOptions{Format: "json"}) == nil {
		f.TriageReport = tj.Bytes()
	}
	for _, e := range res.Experiments {
		if e.Name == triage.PlainExperiment && e.Table != nil {
			_ = report.Write(&tab, e.Table, report.Options{Format: "ncompare", All: true})
			f.Table = tab.String()
		}
	}
	return f, nil
}
