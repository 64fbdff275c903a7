package watch

import (
	"context"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/relevance"
	"github.com/perfbot/perfbot/internal/store"
)

// A commit whose diff from the last measured commit touches only paths
// the job's ignore: globs name cannot have changed its performance: it is
// recorded as tested with 0 runs (no session, no rounds, Ref the measured
// commit it equals), never built or run, and it is no finding: its
// history has no point for it (no run), and it is never a reference (a
// reference needs runs), so the next relevant commit is measured against
// the last measured one. The store's tested table is the one record of
// it ([Unchanged] reads it back).

// Unchanged reports whether a tested commit was recorded unchanged by its
// diff (0 runs, only ignored paths changed) rather than measured.
func Unchanged(t store.Tested) bool {
	return t.Session == "" && len(t.Rounds) == 0 && t.Ref != ""
}

// splitUnchanged splits the selection's new commits into those to measure
// and those whose diff from the last commit to be measured before them
// (the reference first) touches only ignored paths, with the commit each
// equals and the reason.
func splitUnchanged(ctx context.Context, repo *gitrev.Repo, j *job.Job, sel selection) (measured []gitrev.Commit, skipped []unchangedCommit, err error) {
	prev := sel.Ref.Hash
	for _, c := range sel.New {
		if prev != "" && len(j.Ignore) > 0 {
			r, err := relevance.Check(ctx, repo, j, prev, c.Hash)
			if err != nil {
				return nil, nil, err
			}
			if r.Irrelevant() {
				skipped = append(skipped, unchangedCommit{Commit: c, Same: prev, Reason: r.Reason()})
				continue
			}
		}
		measured = append(measured, c)
		prev = c.Hash
	}
	return measured, skipped, nil
}

// unchangedCommit is a new commit not measured: Same is the measured
// commit it equals.
type unchangedCommit struct {
	Commit gitrev.Commit
	Same   string
	Reason string
}

// recordUnchanged records the commits not measured as tested with 0 runs.
func (w *Watcher) recordUnchanged(ctx context.Context, st *store.Store, j *job.Job, h hist, branch string, skipped []unchangedCommit, cycle int64, rep *CycleReport) error {
	for _, u := range skipped {
		w.logf("watch: %s on %s%s: %s unchanged, 0 runs: %s (the same as %s)", j.Name, branch, h.suffix(), u.Commit.Short(), u.Reason, gitrev.Short(u.Same))
		rec := &store.Tested{Job: j.Key(), Variant: h.id, Commit: u.Commit.Hash, Branch: branch, Ref: u.Same, Cycle: cycle, When: time.Now()}
		if err := st.PutTested(ctx, rec); err != nil {
			return err
		}
		rep.Tested = append(rep.Tested, TestedCommit{Job: j.Name, Branch: branch, Commit: u.Commit, Ref: u.Same, Unchanged: u.Reason})
	}
	return nil
}
