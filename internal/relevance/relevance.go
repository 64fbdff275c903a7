// Package relevance says whether a change can matter to a job's
// benchmark before anything is built: a diff that touches only the paths
// the job's ignore: globs name (docs/**, *.md, as CI systems'
// paths-ignore) cannot, and the pipelines report such a commit as
// unchanged with no run. A job without ignore: globs treats every change
// as relevant; qualify never asks.
package relevance

import (
	"context"
	"fmt"
	"strings"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
)

// Result is what the diff between two commits touches.
type Result struct {
	// Changed are the changed paths, sorted as git lists them.
	Changed []string
	// Relevant are the changed paths the job does not ignore.
	Relevant []string
	// Globs says whether the job declares ignore: globs at all.
	Globs bool
}

// Irrelevant reports whether the change cannot matter: the job declares
// ignore: globs and every changed path matches one (an empty diff too).
func (r Result) Irrelevant() bool { return r.Globs && len(r.Relevant) == 0 }

// Reason says, in words for a report, why the change was not measured
// ("only ignored paths changed: README.md, docs/x.md"); "" when it is
// relevant.
func (r Result) Reason() string {
	if !r.Irrelevant() {
		return ""
	}
	if len(r.Changed) == 0 {
		return "no file changed"
	}
	return "only ignored paths changed: " + list(r.Changed, 5)
}

func list(paths []string, max int) string {
	if len(paths) <= max {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:max], ", "), len(paths)-max)
}

// Check diffs commits a and b (hashes or revisions) in repo and matches
// the changed paths against j's ignore: globs.
func Check(ctx context.Context, repo *gitrev.Repo, j *job.Job, a, b string) (Result, error) {
	r := Result{Globs: len(j.Ignore) > 0}
	if !r.Globs {
		return r, nil // every change is relevant; no need to diff
	}
	paths, err := repo.ChangedPaths(ctx, a, b)
	if err != nil {
		return r, fmt.Errorf("relevance of %s..%s to %s: %w", gitrev.Short(a), gitrev.Short(b), j.Name, err)
	}
	r.Changed = paths
	for _, p := range paths {
		if !j.Ignored(p) {
			r.Relevant = append(r.Relevant, p)
		}
	}
	return r, nil
}
