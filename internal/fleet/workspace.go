package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
)

// workspace is a machine's own folder: clones of the jobs' repositories,
// a local store that indexes its build cache, the cached artifacts and the
// worktrees runs execute in, and the runs' logs.
//
//	<dir>/repos/<hash of the repository's path or URL>/   a clone
//	<dir>/.perfbot/                                       local store, builds/, worktrees/, results/
type workspace struct {
	dir   string
	pool  *pgxpool.Pool
	local *store.Store
	mu    sync.Mutex // one git clone or fetch at a time

	keysMu sync.Mutex
	keys   map[string]*sync.Mutex // one download of a build key's artifacts at a time
}

// keyLock is the lock of build key's artifacts: two jobs of one server
// that need one build (a watch's builds go side by side) must not both
// empty and fill its folder.
func (w *workspace) keyLock(key string) *sync.Mutex {
	w.keysMu.Lock()
	defer w.keysMu.Unlock()
	if w.keys == nil {
		w.keys = map[string]*sync.Mutex{}
	}
	m := w.keys[key]
	if m == nil {
		m = new(sync.Mutex)
		w.keys[key] = m
	}
	return m
}

func openWorkspace(dir string, pool *pgxpool.Pool) (*workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(filepath.Join(abs, ".perfbot"))
	if err != nil {
		return nil, fmt.Errorf("the worker's build cache: %w", err)
	}
	return &workspace{dir: abs, pool: pool, local: st}, nil
}

func (w *workspace) Close() error { return w.local.Close() }

// open loads spec's job with its repository replaced by this machine's
// clone (holding commits), and a builder for it.
func (w *workspace) open(ctx context.Context, spec JobSpec, commits ...string) (*job.Job, *build.Builder, error) {
	j, err := spec.Load()
	if err != nil {
		return nil, nil, fmt.Errorf("job %s: %w", spec.File, err)
	}
	repo, err := w.clone(ctx, j.Repo, commits)
	if err != nil {
		return nil, nil, err
	}
	j.Repo = repo.Dir
	return j, &build.Builder{Repo: repo, Store: w.local, Dir: w.local.Dir()}, nil
}

// clone returns this machine's clone of src (a path or URL every machine
// reaches), fetching when it lacks one of commits.
func (w *workspace) clone(ctx context.Context, src string, commits []string) (*gitrev.Repo, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	sum := sha256.Sum256([]byte(src))
	dir := filepath.Join(w.dir, "repos", hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		tmp := dir + ".tmp"
		_ = os.RemoveAll(tmp)
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, err
		}
		if err := w.git(ctx, "cloning "+src, "clone", "--quiet", "--no-checkout", src, tmp); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, dir); err != nil {
			return nil, err
		}
	}
	repo, err := gitrev.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	for _, c := range commits {
		if _, err := repo.Resolve(ctx, c); err == nil {
			continue
		}
		if err := w.git(ctx, "fetching "+src, "-C", dir, "fetch", "--quiet", "origin", "+refs/*:refs/remotes/origin/all/*"); err != nil {
			return nil, err
		}
		if _, err := repo.Resolve(ctx, c); err != nil {
			return nil, fmt.Errorf("%s has no commit %s: %w", src, gitrev.Short(c), err)
		}
	}
	return repo, nil
}

// git runs git with args through package run's supervisor, as builds and
// runs are: a worker or server killed in the middle of a clone of a large
// repository takes git with it.
func (w *workspace) git(ctx context.Context, what string, args ...string) error {
	log := filepath.Join(w.dir, "git.log")
	cmd := "git"
	for _, a := range args {
		cmd += " " + job.ShellQuote(a)
	}
	res, err := run.Exec(ctx, run.Spec{Command: cmd, Dir: w.dir, Env: gitrev.Env(), CPU: -1, StdoutPath: log, StderrPath: log})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if res.ExitCode != 0 {
		out, _ := os.ReadFile(log)
		return fmt.Errorf("%s: git exited with %d (%s): %s", what, res.ExitCode, res.Signal, strings.TrimSpace(string(out)))
	}
	return nil
}

// publish uploads a build made here (artifacts and log) into the fleet's
// database, addressed by content, and records it. Each file is streamed
// from disk (putBlobFile); the artifacts are only uploaded when the key
// has no successful record yet (the first one wins for good: putBuild),
// so building a key again costs no upload of its artifacts.
func (w *workspace) publish(ctx context.Context, j *job.Job, a BuildArgs, machine string, res *build.Result, buildErr error) (*fleetBuild, error) {
	rec := res.Record
	fb := &fleetBuild{Key: rec.Key, Commit: rec.Commit, Variant: a.Variant.Name, Class: a.Class, Machine: machine,
		Status: string(rec.Status), Error: rec.Error, Artifacts: map[string]string{}}
	if _, err := os.Stat(rec.LogPath); err == nil {
		if fb.LogSHA, err = putBlobFile(ctx, w.pool, rec.LogPath); err != nil {
			return nil, fmt.Errorf("the log of build %s: %w", rec.Key, err)
		}
	}
	if buildErr == nil {
		if had, err := getBuild(ctx, w.pool, rec.Key); err == nil && had.Status == string(store.BuildOK) {
			return had, nil
		}
		for _, art := range j.Build.Artifacts {
			h, err := putBlobFile(ctx, w.pool, filepath.Join(rec.ArtifactDir, art))
			if errors.Is(err, errTooLarge) {
				// Building it again makes it no smaller.
				return nil, river.JobCancel(fmt.Errorf("artifact %s of build %s: %w", art, rec.Key, err))
			}
			if err != nil {
				return nil, fmt.Errorf("artifact %s of build %s: %w", art, rec.Key, err)
			}
			fb.Artifacts[art] = h
		}
	}
	return putBuild(ctx, w.pool, fb)
}

// restore returns a worktree of the build of slot s on this machine, with
// the artifacts the round was planned with (s.Artifacts; the fleet's
// record of the build for a slot that carries none).
func (w *workspace) restore(ctx context.Context, j *job.Job, b *build.Builder, s Slot) (*build.Result, error) {
	rec, err := w.artifacts(ctx, s.BuildKey, s.Artifacts)
	if err != nil {
		return nil, err
	}
	return b.Restore(ctx, j, s.Variant, rec)
}

// artifacts returns this machine's cached copy of the fleet's build key
// with artifacts arts (path -> SHA-256; nil: those the fleet's record
// holds): from the local cache when every artifact there has its hash,
// else downloaded (and checked) from the database. A stale or damaged
// local artifact is never used, and neither is a build of the key other
// than the one the round was planned with.
func (w *workspace) artifacts(ctx context.Context, key string, arts map[string]string) (*store.BuildRecord, error) {
	l := w.keyLock(key)
	l.Lock()
	defer l.Unlock()
	fb, err := getBuild(ctx, w.pool, key)
	if err != nil {
		return nil, err
	}
	if arts == nil {
		if fb.Status != string(store.BuildOK) {
			return nil, fmt.Errorf("%w: %s: %s", build.ErrFailed, gitrev.Short(fb.Commit), fb.Error)
		}
		arts = fb.Artifacts
	}
	rec, err := w.local.GetBuild(ctx, key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if err != nil || rec.Status != store.BuildOK || !matches(rec.ArtifactDir, arts) {
		dir := filepath.Join(w.local.Dir(), "builds", key, "artifacts")
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		for art, h := range arts {
			if err := getBlobFile(ctx, w.pool, h, filepath.Join(dir, art)); err != nil {
				return nil, fmt.Errorf("artifact %s of build %s: %w", art, key, err)
			}
		}
		rec = &store.BuildRecord{Key: key, Commit: fb.Commit, Variant: fb.Variant, Status: store.BuildOK,
			ArtifactDir: dir, LogPath: filepath.Join(w.local.Dir(), "builds", key, "build.log"), Started: time.Now()}
		if err := w.local.PutBuild(ctx, rec); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// matches reports whether dir holds every artifact with its hash.
func matches(dir string, arts map[string]string) bool {
	for art, want := range arts {
		f, err := os.Open(filepath.Join(dir, art))
		if err != nil {
			return false
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil || hex.EncodeToString(h.Sum(nil)) != want {
			return false
		}
	}
	return true
}

// migrateAndOpen brings the fleet's database to this perfbot's schema and
// opens the process's workspace in dir: what a server and a worker both
// do first.
func migrateAndOpen(ctx context.Context, pool *pgxpool.Pool, dir string) (*workspace, error) {
	if err := Migrate(ctx, pool); err != nil {
		return nil, err
	}
	return openWorkspace(dir, pool)
}

// LocalDir returns dir, or when it is "" the default local folder of a
// fleet process named name ("server", "submit", "worker-<machine>"):
// under the user's cache folder.
func LocalDir(dir, name string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no folder given and no cache folder for the default: %w", err)
	}
	return filepath.Join(cache, "perfbot", name), nil
}
