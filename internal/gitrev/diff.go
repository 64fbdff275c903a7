package gitrev

import (
	"context"
	"strings"
)

// ChangedPaths returns the paths (slash-separated, relative to the
// repository root) that differ between commits a and b, both sides of a
// rename included, without rename detection: git diff --name-only
// --no-renames a b. Identical trees give none.
func (r *Repo) ChangedPaths(ctx context.Context, a, b string) ([]string, error) {
	out, err := git(ctx, r.Dir, "-c", "core.quotePath=false", "diff", "--name-only", "--no-renames", "-z", a, b, "--")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}
