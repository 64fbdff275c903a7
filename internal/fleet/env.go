package fleet

import (
	"context"
	"fmt"

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
// into the server's workspace (workspace.artifacts: checked by their
// SHA-256). serverCopies (servercopies.go) adds the build's log and
// source to the same copy.
type localCopy struct {
	r  *Remote
	ws *workspace
}

func (b localCopy) Build(ctx context.Context, j *job.Job, c gitrev.Commit, v job.Variant) (*build.Result, error) {
	res, _, err := b.copy(ctx, j, c, v)
	return res, err
}

// copy builds commit under v on the fleet and, for a good build, copies
// its artifacts to the server: res is the build with its record's
// ArtifactDir there (a copy of the remote's record), local the workspace's
// record of the copy (nil for a build that failed).
func (b localCopy) copy(ctx context.Context, j *job.Job, c gitrev.Commit, v job.Variant) (res *build.Result, local *store.BuildRecord, err error) {
	res, err = b.r.Build(ctx, j, c, v)
	if err != nil || res == nil || res.Record == nil || res.Record.Status != store.BuildOK {
		return res, nil, err
	}
	if local, err = b.ws.artifacts(ctx, res.Record.Key, res.Artifacts); err != nil {
		return nil, nil, fmt.Errorf("copying the build of %s (%s) to the server: %w", c.Short(), variantName(v), err)
	}
	rec := *res.Record
	rec.ArtifactDir = local.ArtifactDir
	out := *res
	out.Record = &rec
	return &out, local, nil
}

// Parallel: a measurement's targets are built at once, as by the remote
// builder itself (measure.ParallelBuilder).
func (b localCopy) Parallel() bool { return b.r.Parallel() }
