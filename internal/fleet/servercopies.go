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
// the server: its artifacts (with their DWARF: localCopy's copy), its log
// and a worktree of its source, in the server's workspace, so that a
// triage reads the builds' layouts, checks a restore's wrappers in its
// log and writes a source patch against its source, as it does on one
// machine. It builds one target at a time (no Parallel): the restores
// share the server's builder.
type serverCopies struct {
	copies localCopy
	b      *build.Builder
}

func (sc *serverCopies) Build(ctx context.Context, j *job.Job, commit gitrev.Commit, v job.Variant) (*build.Result, error) {
	res, local, err := sc.copies.copy(ctx, j, commit, v)
	if err != nil || local == nil {
		return res, err
	}
	if _, err := os.Stat(local.LogPath); err != nil {
		fb, err := getBuild(ctx, sc.copies.ws.pool, res.Record.Key)
		if err != nil {
			return nil, err
		}
		if fb.LogSHA != "" {
			if err := os.MkdirAll(filepath.Dir(local.LogPath), 0o755); err != nil {
				return nil, err
			}
			if err := getBlobFile(ctx, sc.copies.ws.pool, fb.LogSHA, local.LogPath); err != nil {
				return nil, fmt.Errorf("the build log of %s (%s): %w", commit.Short(), variantName(v), err)
			}
		}
	}
	wt, err := sc.b.Restore(ctx, j, v, local)
	if err != nil {
		return nil, err
	}
	res.Record.LogPath, res.Worktree = local.LogPath, wt.Worktree
	return res, nil
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
