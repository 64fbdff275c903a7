// Package build builds one commit of a job under one build variant, in its
// own git worktree, and caches the result: the artifacts are copied to a
// cache folder keyed by commit, build command and variant, so a second
// comparison of the same commits builds nothing. A failed build keeps its log
// and is remembered, so that bisection can skip it.
package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
)

// ErrFailed is wrapped by every error that reports a failed build command
// (as opposed to a failure of perfbot itself). Bisection skips such commits.
var ErrFailed = errors.New("build failed")

// Builder builds commits of one repository and caches the artifacts.
type Builder struct {
	Repo  *gitrev.Repo
	Store *store.Store
	// Dir holds the caches: Dir/builds/<key>/ (artifacts and build.log) and
	// Dir/worktrees/<key>/ (the worktree in which the benchmark runs).
	Dir string
}

// Result is a usable build: a worktree holding the built artifacts.
type Result struct {
	Record   *store.BuildRecord
	Worktree string // where the run command runs
	Cached   bool   // true when nothing was built this time
	// Artifacts are the SHA-256 of the artifacts by path, when the
	// builder knows them (a fleet's build: its rounds run exactly these).
	Artifacts map[string]string
}

// Key identifies a build: the commit, the job's build command, artifacts
// and environment, the job's parameters, the variant's environment, and the
// inherited environment that reaches the compilers (toolchainEnv and every
// variable the job or variant names).
func Key(j *job.Job, commit string, v job.Variant) string {
	h := sha256.New()
	fmt.Fprintf(h, "commit %s\ncommand %q\n", commit, j.Build.Command)
	for _, a := range j.Build.Artifacts {
		fmt.Fprintf(h, "artifact %q\n", a)
	}
	writeMap(h, "env", j.Build.Env)
	writeMap(h, "param", j.Params)
	writeMap(h, "variant-env", v.Env)
	if v.Patch != "" {
		// Builds without a patch keep their keys.
		fmt.Fprintf(h, "patch %x\n", sha256.Sum256([]byte(v.Patch)))
	}
	// The inherited environment the build sees: the toolchain variables,
	// and every variable the job or the variant names (their ${NAME}
	// references expand from it).
	inherited := map[string]string{}
	for _, k := range toolchainEnv {
		inherited[k] = os.Getenv(k)
	}
	for _, m := range []map[string]string{j.Build.Env, v.Env} {
		for k, val := range m {
			inherited[k] = os.Getenv(k)
			os.Expand(val, func(name string) string { inherited[name] = os.Getenv(name); return "" })
		}
	}
	writeMap(h, "inherited", inherited)
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// toolchainEnv are the environment variables that choose or steer
// compilers and linkers; a build made under other values is another build.
var toolchainEnv = []string{"PATH", "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "LD",
	"GOFLAGS", "GOAMD64", "GOEXPERIMENT", "GOTOOLCHAIN", "CGO_CFLAGS", "CGO_LDFLAGS",
	"RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "KCFLAGS", "KCPPFLAGS", "ARCH", "CROSS_COMPILE"}

func writeMap(w io.Writer, kind string, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s %q=%q\n", kind, k, m[k])
	}
}

// Env is the environment of a build (and of the runs of that build): the
// process environment, then the job's build environment, then the variant's
// (whose values may refer to the earlier ones as ${NAME}), then extra, then
// PERFBOT_COMMIT and PERFBOT_VARIANT. The job's parameters are already in
// its env as PERFBOT_PARAM_<NAME> (package job puts them there).
func Env(j *job.Job, commit string, v job.Variant, extra map[string]string) []string {
	env := map[string]string{}
	var order []string
	set := func(k, val string) {
		if _, ok := env[k]; !ok {
			order = append(order, k)
		}
		env[k] = val
	}
	for _, kv := range os.Environ() {
		if k, val, ok := strings.Cut(kv, "="); ok {
			set(k, val)
		}
	}
	lookup := func(k string) string { return env[k] }
	for _, m := range []map[string]string{j.Build.Env, v.Env, extra} {
		for _, k := range sortedKeys(m) {
			set(k, os.Expand(m[k], lookup))
		}
	}
	set("PERFBOT_COMMIT", commit)
	set("PERFBOT_VARIANT", v.Name)
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+env[k])
	}
	return out
}

// EnvArtifacts is the variable that tells a build where its artifacts
// will be: the job's build.artifacts as absolute physical paths in the
// build's worktree, one a line (ArtifactPaths). The layout knobs' compiler
// and linker wrappers pad only the links whose output is one of them
// (package knobs, docs/knobs.md). Builds get it; runs do not.
const EnvArtifacts = "PERFBOT_ARTIFACTS"

// EnvBuildDir is the build's folder (its worktree) as an absolute physical
// path: the wrappers also pad a link of an artifact's name inside it (a
// build that links elsewhere and copies, as zstd does).
const EnvBuildDir = "PERFBOT_BUILD_DIR"

// ArtifactEnv returns env with EnvArtifacts and EnvBuildDir set for a
// build in folder dir: dir with its symbolic links resolved (the wrappers
// compare physical paths, from pwd -P), and each artifact joined to it,
// one a line.
func ArtifactEnv(env []string, dir string, artifacts []string) []string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	paths := make([]string, 0, len(artifacts))
	for _, a := range artifacts {
		paths = append(paths, filepath.Join(dir, a))
	}
	// A perfbot started from inside a wrapped build must not pass that on:
	// wrappers that see PERFBOT_WRAP_ACTIVE add nothing.
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PERFBOT_WRAP_ACTIVE=") })
	return SetEnv(SetEnv(env, EnvArtifacts, strings.Join(paths, "\n")), EnvBuildDir, dir)
}

// SetEnv returns env (NAME=value entries) with name set to value: the
// entry replaced where it is, else added at the end.
func SetEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	done := false
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			if !done {
				out = append(out, name+"="+value)
				done = true
			}
			continue
		}
		out = append(out, kv)
	}
	if !done {
		out = append(out, name+"="+value)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Build returns a worktree of commit built under variant v, building it only
// when no cached build exists. A failed build (now or cached) returns an
// error wrapping ErrFailed that names the commit and ends with the last lines
// of the build log.
func (b *Builder) Build(ctx context.Context, j *job.Job, commit gitrev.Commit, v job.Variant) (*Result, error) {
	key := Key(j, commit.Hash, v)
	wt := filepath.Join(b.Dir, "worktrees", key)
	defer use(wt)() // not collected while it is made
	rec, err := b.Store.GetBuild(ctx, key)
	switch {
	case err == nil && rec.Status == store.BuildFailed:
		return &Result{Record: rec, Cached: true}, failure(rec)
	case err == nil && rec.Status == store.BuildOK:
		if err := b.restore(ctx, j, v, rec, wt); err == nil {
			return &Result{Record: rec, Worktree: wt, Cached: true}, nil
		}
		// The cache is gone or damaged: build again.
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return b.build(ctx, j, commit, v, key, wt)
}

// restore makes sure the worktree of a cached build exists and holds its
// artifacts; it recreates the worktree from the commit and the cached
// artifacts when it was removed.
func (b *Builder) restore(ctx context.Context, j *job.Job, v job.Variant, rec *store.BuildRecord, wt string) error {
	for _, a := range j.Build.Artifacts {
		if _, err := os.Stat(filepath.Join(rec.ArtifactDir, a)); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(wt, ".git")); err != nil {
		_ = b.Repo.RemoveWorktree(ctx, wt)
		if err := b.Repo.AddWorktree(ctx, wt, rec.Commit); err != nil {
			return err
		}
	}
	return b.reset(ctx, j, v, rec, wt)
}

// reset makes a build's worktree what every measurement starts from: the
// commit's files and the cached artifacts, nothing else. Runs execute in the
// worktree, and a benchmark may write there (state, caches, even its own
// binary); each measurement must start alike and run the very binary that
// layout diff and triage read. Build outputs not listed as artifacts are
// removed, so a run that needs one fails at once, the same way every time.
// A variant's source patch is applied again: the worktree holds the source
// its artifacts were built from.
func (b *Builder) reset(ctx context.Context, j *job.Job, v job.Variant, rec *store.BuildRecord, wt string) error {
	if err := b.Repo.CleanWorktree(ctx, wt); err != nil {
		return err
	}
	if v.Patch != "" {
		if err := b.Repo.ApplyPatch(ctx, wt, v.Patch); err != nil {
			return err
		}
	}
	for _, a := range j.Build.Artifacts {
		if err := copyFile(filepath.Join(rec.ArtifactDir, a), filepath.Join(wt, a)); err != nil {
			return err
		}
	}
	return nil
}

func (b *Builder) build(ctx context.Context, j *job.Job, commit gitrev.Commit, v job.Variant, key, wt string) (*Result, error) {
	cache := filepath.Join(b.Dir, "builds", key)
	if err := os.RemoveAll(cache); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	// A worktree left by an interrupted build may hold half-built files.
	_ = b.Repo.RemoveWorktree(ctx, wt)
	if err := b.Repo.AddWorktree(ctx, wt, commit.Hash); err != nil {
		return nil, err
	}
	if v.Patch != "" {
		// The variant's source patch, in its own worktree: the user's
		// checkout is never touched. A patch that does not apply is an
		// error of the caller, not a failed build of the commit.
		if err := b.Repo.ApplyPatch(ctx, wt, v.Patch); err != nil {
			return nil, fmt.Errorf("build %s (variant %s): %w", commit.Short(), v.Name, err)
		}
	}
	rec := &store.BuildRecord{
		Key:         key,
		Commit:      commit.Hash,
		Variant:     v.Name,
		ArtifactDir: filepath.Join(cache, "artifacts"),
		LogPath:     filepath.Join(cache, "build.log"),
		Started:     time.Now(),
	}
	res, err := run.Exec(ctx, run.Spec{
		Command:    j.Build.Command,
		Dir:        wt,
		Env:        ArtifactEnv(Env(j, commit.Hash, v, nil), wt, j.Build.Artifacts),
		Timeout:    j.Build.Timeout,
		CPU:        -1,
		StdoutPath: rec.LogPath,
		StderrPath: rec.LogPath,
	})
	rec.Duration = time.Since(rec.Started)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", commit.Short(), err)
	}
	if ctx.Err() != nil {
		// Interrupted, not failed: record nothing, so a re-run builds again.
		return nil, ctx.Err()
	}
	switch {
	case res.TimedOut:
		rec.Error = fmt.Sprintf("timed out after %v", j.Build.Timeout)
	case res.ExitCode != 0:
		rec.Error = exitText(res)
	default:
		rec.Error = b.collect(j, wt, rec.ArtifactDir)
	}
	if rec.Error != "" {
		rec.Status = store.BuildFailed
	} else {
		rec.Status = store.BuildOK
	}
	// A build killed by its timeout or a signal may succeed next time
	// (a loaded machine, the OOM killer): only a build command's own
	// failure is remembered, for bisect to skip the commit.
	if !res.TimedOut && res.Signal == "" {
		if err := b.Store.PutBuild(ctx, rec); err != nil {
			return nil, err
		}
	}
	if rec.Status == store.BuildFailed {
		return &Result{Record: rec}, failure(rec)
	}
	if err := b.reset(ctx, j, v, rec, wt); err != nil {
		return nil, err
	}
	return &Result{Record: rec, Worktree: wt}, nil
}

// collect copies the artifacts into the cache and returns a failure reason
// when one is missing.
func (b *Builder) collect(j *job.Job, wt, dst string) string {
	for _, a := range j.Build.Artifacts {
		src := filepath.Join(wt, a)
		if _, err := os.Stat(src); err != nil {
			return fmt.Sprintf("artifact %q was not produced", a)
		}
		if err := copyFile(src, filepath.Join(dst, a)); err != nil {
			return fmt.Sprintf("copying artifact %q: %v", a, err)
		}
	}
	return ""
}

func exitText(r run.Result) string {
	if r.Signal != "" {
		return "killed by signal " + r.Signal
	}
	return fmt.Sprintf("exit status %d", r.ExitCode)
}

// failure is the error for a failed build record.
func failure(rec *store.BuildRecord) error {
	variant := ""
	if rec.Variant != "" {
		variant = " (variant " + rec.Variant + ")"
	}
	return fmt.Errorf("%w: %s%s: %s; log %s:\n%s", ErrFailed, gitrev.Short(rec.Commit), variant,
		rec.Error, rec.LogPath, Tail(rec.LogPath, 15))
}

// Tail returns the last n lines of a file, indented, for error messages.
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "    (no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	// On disk before the build record that points at it.
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Restore returns a worktree of a build made elsewhere (on a fleet's
// build machine): rec.ArtifactDir holds its artifacts, which the caller
// has checked against their content hashes. The worktree is
// Dir/worktrees/<rec.Key>, made and reset as a cached build's is, so a run
// of it starts from the commit's files (with variant v's source patch, if
// it has one) and the artifacts, nothing else.
func (b *Builder) Restore(ctx context.Context, j *job.Job, v job.Variant, rec *store.BuildRecord) (*Result, error) {
	wt := filepath.Join(b.Dir, "worktrees", rec.Key)
	defer use(wt)()
	if err := b.restore(ctx, j, v, rec, wt); err != nil {
		return nil, fmt.Errorf("restoring build %s of %s: %w", rec.Key, gitrev.Short(rec.Commit), err)
	}
	return &Result{Record: rec, Worktree: wt, Cached: true}, nil
}
