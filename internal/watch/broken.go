package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// BrokenBuild is a commit whose build failed for good in a cycle: it
// failed, and failed again when built once more in a later cycle.
type BrokenBuild struct {
	Job     string // the atomic job's name
	Branch  string
	History string // "plain" or "forced"
	Commit  gitrev.Commit
	Error   string // the build's error, with the end of its log
	Log     string // the build log
	File    string // the report written into report.dir; "" when the policy does not report broken builds
}

// loadKnown reads what the store knows of a history's commits: tested
// ones (and whether each had successful runs in its rounds) and broken
// builds.
func loadKnown(ctx context.Context, st *store.Store, jobKey, variant string) (known, map[string]store.BrokenBuild, error) {
	tested, err := st.TestedCommits(ctx, jobKey, variant)
	if err != nil {
		return known{}, nil, err
	}
	bb, err := st.BrokenBuilds(ctx, jobKey, variant)
	if err != nil {
		return known{}, nil, err
	}
	k := known{tested: make(map[string]bool, len(tested)), broken: make(map[string]bool, len(bb))}
	for h := range tested {
		k.tested[h] = true
	}
	for h, b := range bb {
		k.broken[h] = b.Final
	}
	k.err = new(error)
	k.ok = func(h string) bool {
		runs, err := st.RunsWithoutValues(ctx, jobKey, h, variant)
		if err != nil {
			*k.err = err
			return false
		}
		for _, r := range runs {
			if r.Status == store.RunOK && r.Session == tested[h].Session {
				return true
			}
		}
		return false
	}
	return k, bb, nil
}

// retryBuilds forgets the cached failure of every chosen commit whose
// first build failed, so that it is built once more.
func retryBuilds(ctx context.Context, st *store.Store, j *job.Job, h hist, sel selection, bb map[string]store.BrokenBuild) error {
	for _, c := range sel.New {
		if b, ok := bb[c.Hash]; ok && !b.Final {
			if err := st.ForgetFailedBuild(ctx, build.Key(j, c.Hash, h.variant)); err != nil {
				return err
			}
		}
	}
	return nil
}

// brokenBuild records a build that failed in this cycle: a first failure
// is retried in a later cycle, a second one is final and reported (the
// job's broken_builds policy) into the report folder, with the build's
// error and log.
func (w *Watcher) brokenBuild(ctx context.Context, s *Place, jc JobConfig, j *job.Job, h hist, branch string,
	t measure.TargetOutcome, bb map[string]store.BrokenBuild, rep *CycleReport) error {
	c := t.Target.Commit
	now := time.Now()
	rec, ok := bb[c.Hash]
	if !ok {
		rec = store.BrokenBuild{Job: j.Key(), Variant: h.id, Commit: c.Hash, First: now}
	}
	rec.Branch, rec.Last, rec.Error = branch, now, t.BuildErr.Error()
	rec.Failures++
	rec.Final = rec.Failures >= 2
	if s.BuildDir != "" {
		rec.LogPath = filepath.Join(s.BuildDir, "builds", build.Key(j, c.Hash, h.variant), "build.log")
	}
	if err := s.Store.PutBrokenBuild(ctx, &rec); err != nil {
		return err
	}
	if !rec.Final {
		w.logf("watch: %s%s: %s does not build (failure 1; built once more in the next cycle): %v", j.Name, h.suffix(), c.Short(), t.BuildErr)
		return nil
	}
	w.logf("watch: %s%s: %s does not build (failed twice; passed over, the next commit that builds is measured against the last one that built): %v",
		j.Name, h.suffix(), c.Short(), t.BuildErr)
	b := BrokenBuild{Job: j.Name, Branch: branch, History: h.name, Commit: c, Error: rec.Error, Log: rec.LogPath}
	if jc.BrokenBuilds {
		file, err := w.exportBroken(b)
		if err != nil {
			return err
		}
		b.File = file
	}
	rep.Broken = append(rep.Broken, b)
	return nil
}

// exportBroken writes a broken build's report into the report folder as
// build-<sha12>[-forced].json: the commit, job, branch, error and log.
func (w *Watcher) exportBroken(b BrokenBuild) (string, error) {
	dir := w.Config.Report.Dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("report folder: %w", err)
	}
	name := "build-" + b.Commit.Short()
	if b.History != "plain" {
		name += "-" + b.History
	}
	data, err := json.MarshalIndent(map[string]string{"commit": b.Commit.Hash, "subject": b.Commit.Subject, "job": b.Job,
		"branch": b.Branch, "history": b.History, "error": b.Error, "log": b.Log}, "", "  ")
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, name+".json")
	return file, writeWhole(file, append(data, '\n'))
}
