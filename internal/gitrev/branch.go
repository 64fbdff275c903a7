package gitrev

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// FirstParents returns the last n commits (all when n <= 0) of the
// first-parent history of ref, oldest first: the commits a robot watching
// the branch tests, in the order they landed.
func (r *Repo) FirstParents(ctx context.Context, ref string, n int) ([]Commit, error) {
	c, err := r.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	args := []string{"log", "--first-parent", "--format=%H%x00%s"}
	if n > 0 {
		args = append(args, "-n", strconv.Itoa(n))
	}
	out, err := git(ctx, r.Dir, append(args, c.Hash, "--")...)
	if err != nil {
		return nil, err
	}
	var cs []Commit
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if h, s, ok := strings.Cut(line, "\x00"); ok {
			cs = append(cs, Commit{Hash: h, Subject: s})
		}
	}
	for i, j := 0, len(cs)-1; i < j; i, j = i+1, j-1 {
		cs[i], cs[j] = cs[j], cs[i]
	}
	return cs, nil
}

// Author returns a commit's author name and e-mail address.
func (r *Repo) Author(ctx context.Context, hash string) (name, email string, err error) {
	out, err := git(ctx, r.Dir, "log", "-1", "--format=%an%x00%ae", hash, "--")
	if err != nil {
		return "", "", err
	}
	name, email, ok := strings.Cut(strings.TrimSpace(out), "\x00")
	if !ok {
		return "", "", fmt.Errorf("author of %s: unexpected git output %q", Short(hash), out)
	}
	return name, email, nil
}

// Fetch fetches the repository's remotes (git fetch --all --prune).
func (r *Repo) Fetch(ctx context.Context) error {
	_, err := git(ctx, r.Dir, "fetch", "--all", "--prune", "--quiet")
	return err
}

// IsAncestor reports whether commit a is an ancestor of b (or b itself).
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := git(ctx, r.Dir, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	// Exit status 1 is "no"; anything else (an unknown commit) is an error.
	if strings.Contains(err.Error(), "exit status 1") {
		return false, nil
	}
	return false, err
}
