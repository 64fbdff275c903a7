package watch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
)

// A backfill tests the commits of a branch from a start commit (the watch
// file's start:, or --since) up to where the history began: the head, for
// a new history, or the oldest commit tested before. It goes oldest
// first, at most max_commits a cycle (less the cycle's new commits at the
// head), each cycle's commits in the same rounds as the newest one tested
// before them, so that every step of the backfilled history is measured
// within one session against its neighbour, as every other step is (the
// first batch of a new history also takes the range's end, so the whole
// range is one step in the first cycle and the head is followed from the
// second); its
// progress is the store's (the range in watch_backfills, the commits
// tested), so a restarted watch goes on where it stopped.

// backfillRange is an active backfill: positions on the branch's
// first-parent list.
type backfillRange struct {
	rec          *store.Backfill
	since, until int
}

// backfill returns the branch's active backfill, starting one when the
// watch file asks for a start commit the history does not reach yet; nil
// when there is none.
func (w *Watcher) backfill(ctx context.Context, s *Place, j *job.Job, h hist, branch string, list []gitrev.Commit, k known) (*backfillRange, error) {
	at := func(hash string) int {
		return slices.IndexFunc(list, func(c gitrev.Commit) bool { return c.Hash == hash })
	}
	rec, err := s.Store.GetBackfill(ctx, j.Key(), h.id, branch)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	start := w.Config.Start
	if start == "" {
		if rec == nil || rec.Done {
			return nil, nil
		}
		start = rec.Since // a backfill begun before goes on
	}
	c, err := s.Repo.Resolve(ctx, start)
	if err != nil {
		return nil, fmt.Errorf("start %q: %w", start, err)
	}
	since := at(c.Hash)
	if since < 0 {
		return nil, fmt.Errorf("start %q (%s) is not on the first-parent history of %s", start, c.Short(), branch)
	}
	if rec != nil && rec.Since == c.Hash {
		if rec.Done {
			return nil, nil
		}
		until := at(rec.Until)
		if until < since {
			// A force-push dropped the range's end: the backfill ends.
			w.logf("watch: %s on %s%s: the backfill's end %s is no longer on the branch; the backfill ends", j.Name, branch, h.suffix(), gitrev.Short(rec.Until))
			return nil, w.endBackfill(ctx, s.Store, j, h, &backfillRange{rec: rec})
		}
		return &backfillRange{rec: rec, since: since, until: until}, nil
	}
	// A new start: up to the oldest commit tested on the branch, else the
	// head.
	until := len(list) - 1
	for i, c := range list {
		if k.tested[c.Hash] {
			until = i
			break
		}
	}
	if since >= until {
		return nil, nil // the history reaches back to the start already
	}
	rec = &store.Backfill{Job: j.Key(), Variant: h.id, Branch: branch, Since: c.Hash, Until: list[until].Hash, Started: time.Now()}
	if err := s.Store.PutBackfill(ctx, rec); err != nil {
		return nil, err
	}
	w.logf("watch: %s on %s%s: backfill from %s to %s (%d commits), oldest first, at most %d a cycle", j.Name, branch, h.suffix(),
		c.Short(), list[until].Short(), until-since+1, w.Config.MaxCommits)
	return &backfillRange{rec: rec, since: since, until: until}, nil
}

// endBackfill records that a backfill is done.
func (w *Watcher) endBackfill(ctx context.Context, st *store.Store, j *job.Job, h hist, bf *backfillRange) error {
	bf.rec.Done = true
	w.logf("watch: %s%s: backfill from %s done", j.Name, h.suffix(), gitrev.Short(bf.rec.Since))
	return st.PutBackfill(ctx, bf.rec)
}

// chooseBackfill picks a cycle's commits of the backfill list[since..until]:
// after the newest commit of the range (its end left out) tested or given
// up on, the next ones by the test policy, oldest first, at most
// maxCommits; the range's start is taken first and its end last. done is
// set when nothing is left.
func chooseBackfill(list []gitrev.Commit, since, until int, k known, policy TestPolicy, maxCommits int) (sel selection, done bool) {
	rng := list[since : until+1]
	end := rng[len(rng)-1]
	last, ref := k.frontier(rng[:len(rng)-1]) // the end is looked at last
	var picked []gitrev.Commit
	if last < 0 {
		picked = append([]gitrev.Commit{rng[0]}, pick(rng[1:], policy, 0)...)
	} else {
		picked = pick(rng[last+1:], policy, 0)
		if ref >= 0 {
			sel.Ref = rng[ref]
		}
	}
	// First build failures after the reference are built once more.
	picked = k.withRetries(picked, rng[ref+1:len(rng)-1])
	sortByList(picked, rng)
	if k.done(end.Hash) && len(picked) == 1 && picked[0].Hash == end.Hash {
		return selection{}, true // the end tested, nothing before it left
	}
	if len(picked) > maxCommits {
		// Oldest first; the rest next cycle. The first batch of a new
		// history takes the end too, in the same rounds: the whole range
		// is one step at once (a change in it is bisected in the first
		// cycle), and the head is followed from the next cycle on, chained
		// to the end. The batch that reaches the end measures it again
		// beside its neighbour.
		if last < 0 && !k.done(end.Hash) && maxCommits >= 2 {
			picked = append(picked[:maxCommits-1:maxCommits-1], end)
		} else {
			picked = picked[:maxCommits]
		}
	}
	sel.New = picked
	return sel, false
}
