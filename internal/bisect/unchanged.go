// Steps decided by the diff: a candidate whose diff from a classified
// neighbour touches only paths the job ignores.

package bisect

import (
	"context"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/relevance"
)

// Relevance says why the change from commit a to commit b cannot matter
// to the bisected job ("" when it can).
type Relevance func(ctx context.Context, a, b string) (reason string, err error)

// JobRelevance is the relevance of changes to job j in repo: its ignore:
// globs (relevance.Check); nil when the job declares none.
func JobRelevance(repo *gitrev.Repo, j *job.Job) Relevance {
	if repo == nil || j == nil || len(j.Ignore) == 0 {
		return nil
	}
	return func(ctx context.Context, a, b string) (string, error) {
		r, err := relevance.Check(ctx, repo, j, a, b)
		if err != nil {
			return "", err
		}
		return r.Reason(), nil
	}
}

// inherit decides step s at once when the candidate's diff from the
// nearest commit classified good (the range's position lo) or bad (hi)
// touches only ignored paths: it inherits that neighbour's verdict with no
// run (Step.Unchanged). It reports whether it decided.
func (b *bisector) inherit(ctx context.Context, s *Step, lo, hi int) (bool, error) {
	if b.opt.Relevance == nil {
		return false, nil
	}
	for _, n := range []struct {
		at int
		v  Verdict
	}{{lo, Good}, {hi, Bad}} {
		nb := b.at(n.at)
		a, c := nb.Hash, s.Commit.Hash
		if n.v == Bad {
			a, c = c, nb.Hash
		}
		why, err := b.opt.Relevance(ctx, a, c)
		if err != nil {
			return false, err
		}
		if why != "" {
			s.Verdict, s.Unchanged = n.v, true
			s.Reason = "the same as " + nb.Short() + " (" + string(n.v) + "): " + why + "; decided without runs"
			return true, nil
		}
	}
	return false, nil
}

// UnchangedSteps counts the steps decided by the diff, without runs.
func (r *Result) UnchangedSteps() int {
	n := 0
	for _, s := range r.Steps {
		if s.Unchanged {
			n++
		}
	}
	return n
}
