package fleet

// The work of a benchmark machine: builds and rounds.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

type buildWorker struct {
	river.WorkerDefaults[BuildArgs]
	w *Worker
}

// Timeout follows the job file's build timeout.
func (bw *buildWorker) Timeout(job *river.Job[BuildArgs]) time.Duration {
	j, err := job.Args.Job.Load()
	if err != nil {
		return 0
	}
	return buildTimeout(j)
}

func (bw *buildWorker) Work(ctx context.Context, job *river.Job[BuildArgs]) error {
	w, a := bw.w, job.Args
	ctx, end, err := w.begin(ctx, "build of "+gitrev.Short(a.Commit))
	if err != nil {
		return err
	}
	defer end()
	j, b, err := w.ws.open(ctx, a.Job, a.Commit)
	if err != nil {
		return err
	}
	w.cfg.Log("building %s (%s) of %s", gitrev.Short(a.Commit), variantName(a.Variant), j.Name)
	v, err := a.Knobs.place(ctx, w.cfg.Pool, filepath.Join(w.ws.dir, "knobs"), a.Variant)
	if err != nil {
		return fmt.Errorf("the layout knobs of %s: %w", variantName(a.Variant), err)
	}
	res, err := b.Build(ctx, j, gitrev.Commit{Hash: a.Commit}, v)
	if err != nil && !errors.Is(err, build.ErrFailed) {
		return err
	}
	fb, perr := w.ws.publish(ctx, j, a, w.cfg.Machine, res, err)
	if perr != nil {
		return perr
	}
	// The output is the key's record: the first successful build of the
	// key, when another machine made one before.
	return river.RecordOutput(ctx, BuildOutput{Key: fb.Key, Status: fb.Status, Error: fb.Error, Machine: fb.Machine, Artifacts: fb.Artifacts})
}

type roundWorker struct {
	river.WorkerDefaults[RoundArgs]
	w *Worker
}

// Timeout follows the job file's run timeout, per slot.
func (rw *roundWorker) Timeout(job *river.Job[RoundArgs]) time.Duration {
	j, err := job.Args.Job.Load()
	if err != nil {
		return 0
	}
	return roundTimeout(j, len(job.Args.Slots))
}

func (rw *roundWorker) Work(ctx context.Context, job *river.Job[RoundArgs]) error {
	w, a := rw.w, job.Args
	if a.Machine != w.cfg.Machine {
		return river.JobCancel(fmt.Errorf("round for machine %s reached %s", a.Machine, w.cfg.Machine))
	}
	ctx, end, err := w.begin(ctx, fmt.Sprintf("round %d", a.Round))
	if err != nil {
		return err
	}
	defer end()
	var commits []string
	for _, s := range a.Slots {
		commits = append(commits, s.Commit)
	}
	j, b, err := w.ws.open(ctx, a.Job, commits...)
	if err != nil {
		return err
	}
	// The suite's programs must be installed on this machine: a missing
	// one is this machine's fault, said before anything runs (River
	// retries the round; the error shows in the fleet's jobs), never a
	// round of crashed runs.
	if err := measure.CheckPrograms(j); err != nil {
		return fmt.Errorf("machine %s: %w", w.cfg.Machine, err)
	}
	builds := map[string]*build.Result{}
	exec := measure.Local{CPU: w.cfg.CPU, Machine: w.cfg.Machine}
	var out RoundOutput
	for _, s := range a.Slots {
		res := builds[s.BuildKey]
		if res == nil {
			if res, err = w.ws.restore(ctx, j, b, s); err != nil {
				return err
			}
			builds[s.BuildKey] = res
		}
		key := store.RunKey{Job: j.Key(), Commit: s.Commit, Variant: measure.VariantID(s.Variant), Index: s.Index}
		task := measure.Task{Job: j, Key: key, Variant: s.Variant, Build: res, Session: a.Session, Warmup: s.Index == 0}
		if task.Warmup {
			task.Key.Index = 1 // a folder of its own; never stored
			task.LogDir, err = measure.RunLogDir(w.ws.local, store.RunKey{Job: key.Job, Commit: key.Commit, Variant: key.Variant + "~warmup", Index: 1})
		} else {
			task.LogDir, err = measure.RunLogDir(w.ws.local, key)
		}
		if err != nil {
			return err
		}
		rec, err := exec.Execute(ctx, task)
		if err != nil {
			return err
		}
		if task.Warmup {
			continue
		}
		rec.RunKey, rec.Session = key, a.Session
		if err := w.keepLogs(ctx, rec); err != nil {
			return err
		}
		// Stored now, so that nothing measured is lost if this machine
		// dies before the round ends (the orchestrator stores it again:
		// an upsert of the same key).
		if err := w.cfg.Results.PutRun(ctx, rec); err != nil {
			return fmt.Errorf("storing run %s: %w", key, err)
		}
		out.Runs = append(out.Runs, rec)
	}
	w.cfg.Log("round %d of session %.8s: %d runs", a.Round, a.Session, len(out.Runs))
	return river.RecordOutput(ctx, out)
}

// keepLogs uploads a run's logs into the fleet's database and points the
// record at them there (sha256:<hash>), so that any machine can read them.
func (w *Worker) keepLogs(ctx context.Context, rec *store.RunRecord) error {
	for _, p := range []*string{&rec.StdoutPath, &rec.StderrPath} {
		// Streamed, a chunk at a time: a run's output can be large.
		h, err := putBlobFile(ctx, w.cfg.Pool, *p)
		if err != nil {
			return err
		}
		*p = BlobPrefix + h
	}
	return nil
}

// BlobPrefix starts a log path that names a blob in the fleet's database.
const BlobPrefix = "sha256:"
