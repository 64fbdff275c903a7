// Package gitrev talks to git through its command line (so kernel-sized
// repositories work as well as git itself does): it resolves revisions,
// reads commit subjects, lists first-parent history for bisection, and
// creates and removes the detached worktrees in which commits are built.
package gitrev

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Repo is a git repository on disk.
type Repo struct {
	Dir string // the repository's top-level directory
}

// Commit is a resolved revision.
type Commit struct {
	Hash    string `json:"hash"`    // full hash
	Subject string `json:"subject"` // first line of the message
}

// Short returns the commit's first 12 hex digits.
func (c Commit) Short() string { return Short(c.Hash) }

// Short cuts a hash to 12 characters.
func Short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// ErrUnknownRevision is wrapped by Resolve when git does not know a revision.
var ErrUnknownRevision = errors.New("unknown revision")

// Open checks that dir is inside a git work tree and returns its top level.
func Open(ctx context.Context, dir string) (*Repo, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is not a git repository: %w", dir, err)
	}
	return &Repo{Dir: strings.TrimSpace(out)}, nil
}

// Resolve turns a revision (a hash, branch, tag, HEAD~3 ...) into a commit.
func (r *Repo) Resolve(ctx context.Context, rev string) (Commit, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return Commit{}, fmt.Errorf("%w %q", ErrUnknownRevision, rev)
	}
	out, err := git(ctx, r.Dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return Commit{}, fmt.Errorf("%w %q in %s", ErrUnknownRevision, rev, r.Dir)
	}
	c := Commit{Hash: strings.TrimSpace(out)}
	c.Subject, err = r.Subject(ctx, c.Hash)
	return c, err
}

// Subject returns the first line of a commit's message.
func (r *Repo) Subject(ctx context.Context, hash string) (string, error) {
	out, err := git(ctx, r.Dir, "log", "-1", "--format=%s", hash, "--")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// FirstParentPath returns the commits on the first-parent path from good
// (exclusive) to bad (inclusive), oldest first. It fails when good is not a
// first-parent ancestor of bad.
func (r *Repo) FirstParentPath(ctx context.Context, good, bad string) ([]Commit, error) {
	if _, err := git(ctx, r.Dir, "merge-base", "--is-ancestor", good, bad); err != nil {
		return nil, fmt.Errorf("%s is not an ancestor of %s", Short(good), Short(bad))
	}
	out, err := git(ctx, r.Dir, "log", "--first-parent", "--reverse", "--format=%H%x00%s", good+".."+bad, "--")
	if err != nil {
		return nil, err
	}
	var cs []Commit
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		h, s, _ := strings.Cut(line, "\x00")
		cs = append(cs, Commit{Hash: h, Subject: s})
	}
	if len(cs) == 0 || cs[len(cs)-1].Hash != bad {
		return nil, fmt.Errorf("%s is not on the first-parent history of %s", Short(good), Short(bad))
	}
	return cs, nil
}

// Parent returns a commit's first parent.
func (r *Repo) Parent(ctx context.Context, hash string) (Commit, error) {
	return r.Resolve(ctx, hash+"^1")
}

// Parents returns a commit's parents in order (the first parent first):
// none for a root commit, two or more for a merge.
func (r *Repo) Parents(ctx context.Context, hash string) ([]Commit, error) {
	out, err := git(ctx, r.Dir, "rev-list", "--parents", "-n", "1", hash, "--")
	if err != nil {
		return nil, err
	}
	f := strings.Fields(out)
	if len(f) == 0 {
		return nil, fmt.Errorf("%w %q in %s", ErrUnknownRevision, hash, r.Dir)
	}
	var ps []Commit
	for _, h := range f[1:] {
		c := Commit{Hash: h}
		if c.Subject, err = r.Subject(ctx, h); err != nil {
			return nil, err
		}
		ps = append(ps, c)
	}
	return ps, nil
}

// MergeBase returns the best common ancestor of a and b (git merge-base;
// one of them when a criss-cross history has several). It fails when
// they have none.
func (r *Repo) MergeBase(ctx context.Context, a, b string) (Commit, error) {
	out, err := git(ctx, r.Dir, "merge-base", a, b)
	if err != nil {
		return Commit{}, fmt.Errorf("%s and %s have no common ancestor: %w", Short(a), Short(b), err)
	}
	return r.Resolve(ctx, strings.TrimSpace(out))
}

// AddWorktree checks out hash, detached, in a new worktree at dir (which must
// not exist). Remove it with RemoveWorktree.
func (r *Repo) AddWorktree(ctx context.Context, dir, hash string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	// A worktree left registered by a killed perfbot blocks the path: prune first.
	_, _ = git(ctx, r.Dir, "worktree", "prune")
	if _, err := git(ctx, r.Dir, "worktree", "add", "--detach", "--force", dir, hash); err != nil {
		return fmt.Errorf("creating worktree for %s: %w", Short(hash), err)
	}
	return nil
}

// RemoveWorktree deletes a worktree made by AddWorktree.
func (r *Repo) RemoveWorktree(ctx context.Context, dir string) error {
	if _, err := git(ctx, r.Dir, "worktree", "remove", "--force", dir); err != nil {
		// Fall back to deleting the files; prune forgets the registration.
		if rmErr := os.RemoveAll(dir); rmErr != nil {
			return fmt.Errorf("removing worktree %s: %w", dir, err)
		}
		_, _ = git(ctx, r.Dir, "worktree", "prune")
	}
	return nil
}

// CleanWorktree puts a worktree back to its commit: tracked files
// restored, untracked and ignored files (build outputs, files a benchmark
// wrote) removed.
func (r *Repo) CleanWorktree(ctx context.Context, dir string) error {
	if _, err := git(ctx, dir, "checkout", "--force", "--quiet", "HEAD", "--", "."); err != nil {
		return fmt.Errorf("cleaning worktree %s: %w", dir, err)
	}
	if _, err := git(ctx, dir, "clean", "-ffdxq"); err != nil {
		return fmt.Errorf("cleaning worktree %s: %w", dir, err)
	}
	return nil
}

// ApplyPatch applies patch, a diff in git's format, to the files of the
// worktree at dir (git apply; the index and HEAD are left alone). It
// fails, changing nothing, when the patch does not apply.
func (r *Repo) ApplyPatch(ctx context.Context, dir, patch string) error {
	if _, err := gitIn(ctx, dir, strings.NewReader(patch), "apply", "--whitespace=nowarn", "-"); err != nil {
		return fmt.Errorf("applying a source patch in %s: %w", dir, err)
	}
	return nil
}

// git runs one git command in dir and returns its stdout; errors include
// git's stderr.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	return gitIn(ctx, dir, nil, args...)
}

// gitIn is git with stdin read from in (nil: none).
func gitIn(ctx context.Context, dir string, in io.Reader, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Stdin = in
	cmd.Env = Env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.String(), fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return stdout.String(), nil
}

// Env is the environment perfbot runs git in: its own, without the
// variables that point git at a repository (a hook's GIT_DIR,
// GIT_WORK_TREE or GIT_INDEX_FILE would turn a worktree's checkout, clean
// or apply onto the user's repository), never prompting, in the C locale.
// Other GIT_* settings (GIT_SSH_COMMAND, say) are kept.
func Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
}
