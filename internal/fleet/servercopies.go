package fleet

// Copies of the fleet's builds on the server, for what a triage reads.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
)

// serverCopies builds on the fleet (remote) and gives each build a copy on
// the server: its artifacts (with their DWARF), its log and a worktree of
// its source, in the server's workspace, so that a triage reads the
// builds' layouts, checks a restore's wrappers in its log and writes a
// source patch against its source, as it does on one machine.
type serverCopies struct {
	remote *Remote
	ws     *workspace
	b      *build.Builder
}

func (sc *serverCopies) Build(ctx context.Context, j *job.Job, commit gitrev.Commit, v job.Variant) (*build.Result, error) {
	res, err := sc.remote.Build(ctx, j, commit, v)
	if err != nil || res == nil || res.Record == nil || res.Record.Status != store.BuildOK {
		return res, err
	}
	local, err := sc.ws.artifacts(ctx, res.Record.Key, res.Artifacts)
	if err != nil {
		return nil, fmt.Errorf("copying the build of %s (%s) to the server: %w", commit.Short(), variantName(v), err)
	}
	if _, err := os.Stat(local.LogPath); err != nil {
		fb, err := getBuild(ctx, sc.ws.pool, res.Record.Key)
		if err != nil {
			return nil, err
		}
		if fb.LogSHA != "" {
			if err := os.MkdirAll(filepath.Dir(local.LogPath), 0o755); err != nil {
				return nil, err
			}
			if err := getBlobFile(ctx, sc.ws.pool, fb.LogSHA, local.LogPath); err != nil {
				return nil, fmt.Errorf("the build log of %s (%s): %w", commit.Short(), variantName(v), err)
			}
		}
	}
	wt, err := sc.b.Restore(ctx, j, v, local)
	if err != nil {
		return nil, err
	}
	rec := *res.Record
	rec.ArtifactDir, rec.LogPath = local.ArtifactDir, local.LogPath
	out := *res
	out.Record, out.Worktree = &rec, wt.Worktree
	return &out, nil
}

// knobsRoot is the knobs folder of results store st, as the layout knobs
// spell it (absolute): triage and bisect write a variant's files there.
func knobsRoot(st *store.Store) string {
	dir, err := filepath.Abs(filepath.Join(st.Dir(), "knobs"))
	if err != nil {
		return ""
	}
	return dir
}
