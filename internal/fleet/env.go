package fleet

import (
	"context"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// Env is the fleet's measure.Env for job spec on machines of class, as
// the server's pipelines (watch, sensitivity) use it: the fleet's results
// store, repo for reading history, builds on the class's machines with
// their artifacts copied into the server's workspace (the layouts and
// sizes that sensitivity, triage and the watch read), and rounds on the
// class's machines. done forgets the machines the measurements kept.
func (s *Server) Env(spec JobSpec, class string, repo *gitrev.Repo, logf func(format string, args ...any)) (env measure.Env, done func()) {
	remote := s.client.For(spec, class)
	return measure.Env{Store: s.cfg.Results, Repo: repo, Builder: localCopy{remote, s.ws}, Executor: remote, Logf: logf}, remote.Close
}

// localCopy builds on the fleet and copies each good build's artifacts
// into the workspace (workspace.artifacts: checked by their SHA-256).
type localCopy struct {
	r  *Remote
	ws *workspace
}

func (b localCopy) Build(ctx context.Context, j *job.Job, c gitrev.Commit, v job.Variant) (*build.Result, error) {
	res, err := b.r.Build(ctx, j, c, v)
	if err != nil || res == nil || res.Record == nil || res.Record.Status != store.BuildOK {
		return res, err
	}
	rec, err := b.ws.artifacts(ctx, res.Record.Key, res.Artifacts)
	if err != nil {
		return nil, err
	}
	res.Record.ArtifactDir = rec.ArtifactDir
	return res, nil
}

// Parallel: a measurement's targets are built at once, as by the remote
// builder itself (measure.ParallelBuilder).
func (b localCopy) Parallel() bool { return b.r.Parallel() }
