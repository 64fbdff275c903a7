// Package watch is perfbot's robot: it follows the branches of the
// repositories of a watch file's jobs, tests new commits unattended, keeps
// a comparable history per job and metric, finds change points in it,
// bisects each one to its culprit, triages the culprit (real or alignment
// artifact), and records and reports one finding per culprit.
//
// A cycle, per job and branch:
//
//  1. optionally git fetch;
//  2. choose the untested commits after the newest tested one (the test
//     policy and the cap thin a backlog; the head is always taken);
//  3. measure them in whole interleaved rounds together with the newest
//     tested commit (the reference), so that every step of the history is
//     a comparison within one session, and with the job's anchor (anchor:
//     true), and record each as tested;
//  4. rebuild the histories and look for change points (package
//     changepoint), bisect each new one between the tested commits around
//     it, triage the culprit, and record, export and mail the finding.
//
// Everything measured is committed as it finishes (package measure), and
// every decision is keyed in the store, so a killed cycle resumes and a
// repeated one measures and reports nothing twice.
package watch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// Watcher runs the cycles of one watch file.
type Watcher struct {
	Config *Config
	// CPU is where runs are pinned (-1: not pinned).
	CPU      int
	Progress measure.Progress
	Logf     func(format string, args ...any)
	// Wait is told when another perfbot holds the machine.
	Wait func(holder string)
	// Now is the clock (tests set it).
	Now func() time.Time

	// memos keep the histories' comparisons between cycles, by store:
	// each cycle compares only the commits tested since (history.Memo).
	memoMu sync.Mutex
	memos  map[string]*history.Memo
}

// memo is the store's memo of comparisons.
func (w *Watcher) memo(st *store.Store) *history.Memo {
	w.memoMu.Lock()
	defer w.memoMu.Unlock()
	if w.memos == nil {
		w.memos = map[string]*history.Memo{}
	}
	m := w.memos[st.Path()]
	if m == nil {
		m = &history.Memo{}
		w.memos[st.Path()] = m
	}
	return m
}

// CycleReport says what one cycle did.
type CycleReport struct {
	Started, Finished time.Time
	Tested            []TestedCommit
	Findings          []string // culprits of new or updated findings
	Errors            []error  // per job and branch; the cycle goes on
}

// TestedCommit is one commit a cycle measured.
type TestedCommit struct {
	Job    string // the atomic job's name
	Branch string
	Commit gitrev.Commit
	Ref    string
}

func (w *Watcher) logf(format string, args ...any) {
	if w.Logf != nil {
		w.Logf(format, args...)
	}
}

// Cycle runs one cycle over every job and branch. Errors of one job or
// branch (a build that fails, a branch that does not exist) are reported
// in the CycleReport and do not stop the others; an interruption (ctx)
// does.
func (w *Watcher) Cycle(ctx context.Context) (*CycleReport, error) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	rep := &CycleReport{Started: now()}
	cycle := rep.Started.UnixNano()
	for _, jc := range w.Config.Jobs {
		jobs, err := job.Load(jc.File)
		if err != nil {
			rep.Errors = append(rep.Errors, err)
			w.recordLoad(ctx, jc, cycle, rep.Started, err)
			continue
		}
		for _, j := range jobs {
			// runJob records the job's cycle and turns a panic into its error.
			if err := w.runJob(ctx, jc, j, cycle, rep); err != nil {
				if ctx.Err() != nil {
					return rep, err
				}
				rep.Errors = append(rep.Errors, fmt.Errorf("job %s: %w", j.Name, err))
			}
		}
	}
	rep.Finished = now()
	return rep, nil
}

// job runs a cycle of one atomic job over every branch.
func (w *Watcher) job(ctx context.Context, jc JobConfig, j *job.Job, cycle int64, rep *CycleReport) error {
	s, err := measure.Open(ctx, j, "", w.Wait)
	if err != nil {
		return err
	}
	defer s.Close()
	hists, err := histories(jc, s)
	if err != nil {
		return err
	}
	if w.Config.Fetch {
		if err := s.Repo.Fetch(ctx); err != nil {
			return fmt.Errorf("git fetch: %w", err)
		}
	}
	// Every branch is resolved first: findings are withdrawn only against
	// the heads of all of them.
	lists := make([][]gitrev.Commit, len(w.Config.Branches))
	var heads []string
	for i, branch := range w.Config.Branches {
		list, err := s.Repo.FirstParents(ctx, branch, 0)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Errorf("job %s: branch %s: %w", j.Name, branch, err))
			continue
		}
		lists[i] = list
		if len(list) > 0 {
			heads = append(heads, list[len(list)-1].Hash)
		}
	}
	for i, branch := range w.Config.Branches {
		if lists[i] == nil {
			continue
		}
		for _, h := range hists {
			// A branch that fails (a build that is not a build failure, a
			// store error) does not stop the others.
			err := w.measureBranch(ctx, s, jc, j, h, branch, lists[i], cycle, rep)
			if err == nil {
				err = w.detect(ctx, s, jc, j, h, branch, lists[i], rep)
			}
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				rep.Errors = append(rep.Errors, fmt.Errorf("job %s: branch %s%s: %w", j.Name, branch, h.suffix(), err))
			}
		}
	}
	if len(heads) == len(w.Config.Branches) {
		w.withdraw(ctx, s, heads)
	}
	// Findings whose hook or mail did not go out (a server that was down)
	// are told now.
	w.tellPending(ctx, s.Store, jc.Report)
	return nil
}

// measureBranch tests the branch's new commits beside their reference
// (and the history's anchor, when the job keeps one).
func (w *Watcher) measureBranch(ctx context.Context, s *measure.Session, jc JobConfig, j *job.Job, h hist, branch string, list []gitrev.Commit, cycle int64, rep *CycleReport) error {
	tested, err := s.Store.TestedCommits(ctx, j.Key(), h.id)
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for h := range tested {
		done[h] = true
	}
	sel := choose(list, done, w.Config.Test, w.Config.MaxCommits)
	if len(sel.New) == 0 {
		return nil
	}
	var targets []measure.Target
	if sel.Ref.Hash != "" {
		targets = append(targets, measure.Target{Commit: sel.Ref, Variant: h.variant})
	}
	for _, c := range sel.New {
		targets = append(targets, measure.Target{Commit: c, Variant: h.variant})
	}
	anchor := ""
	if jc.Anchor {
		if anchor, err = w.anchorFor(ctx, s.Store, j, h, sel); err != nil {
			return err
		}
		if _, err := s.Repo.Resolve(ctx, anchor); errors.Is(err, gitrev.ErrUnknownRevision) {
			// Gone from the repository (a force-push and git gc, a fresh
			// clone): it cannot build, so it is replaced now, as one that
			// stops building is, and the ratios restart.
			next := sel.Ref.Hash
			if next == "" {
				next = sel.New[0].Hash
			}
			w.logf("watch: %s%s: the anchor %s is not in the repository any more; %s is the anchor from now on",
				j.Name, h.suffix(), gitrev.Short(anchor), gitrev.Short(next))
			if err := setAnchor(ctx, s.Store, j.Key(), h.id, next); err != nil {
				return err
			}
			anchor = next
		}
		if anchor == sel.Ref.Hash || slices.ContainsFunc(sel.New, func(c gitrev.Commit) bool { return c.Hash == anchor }) {
			anchor = "" // measured anyway
		} else {
			targets = append(targets, measure.Target{Commit: gitrev.Commit{Hash: anchor, Subject: "(anchor)"}, Variant: h.variant})
		}
	}
	w.logf("watch: %s on %s%s: testing %d new commits against %s%s", j.Name, branch, h.suffix(), len(sel.New), orNone(sel.Ref.Short()), anchorNote(anchor))
	out, err := measure.Measure(ctx, j, targets, measure.Options{Store: s.Store, Builder: s.Builder, CPU: w.CPU,
		WholeRounds: true, Retry: true, Progress: w.Progress, Wait: w.Wait})
	if err != nil {
		return err
	}
	newAnchor := "" // the newest commit that built, should the anchor not
	for i, t := range out.Targets {
		if sel.Ref.Hash != "" && i == 0 {
			continue
		}
		if anchor != "" && i == len(out.Targets)-1 {
			if (t.BuildErr != nil || t.Build == nil) && newAnchor != "" {
				// A new anchor from the next cycle on: the ratios restart.
				w.logf("watch: %s%s: the anchor %s does not build any more (%v); %s is the anchor from now on",
					j.Name, h.suffix(), gitrev.Short(anchor), t.BuildErr, gitrev.Short(newAnchor))
				if err := setAnchor(ctx, s.Store, j.Key(), h.id, newAnchor); err != nil {
					return err
				}
			}
			continue
		}
		if t.BuildErr == nil && t.Build != nil {
			newAnchor = t.Target.Commit.Hash
		}
		if t.BuildErr != nil {
			w.logf("watch: %s: %s does not build: %v", j.Name, t.Target.Commit.Short(), t.BuildErr)
		}
		rec := &store.Tested{Job: j.Key(), Variant: h.id, Commit: t.Target.Commit.Hash, Branch: branch, Ref: sel.Ref.Hash,
			Session: out.Session, Rounds: out.Rounds, Cycle: cycle, When: time.Now()}
		if t.Build != nil {
			rec.Layout = layoutSummary(t.Build, j.Build.Artifacts)
		}
		if err := s.Store.PutTested(ctx, rec); err != nil {
			return err
		}
		rep.Tested = append(rep.Tested, TestedCommit{Job: j.Name, Branch: branch, Commit: t.Target.Commit, Ref: sel.Ref.Hash})
	}
	return nil
}

// anchorFor returns the history's anchor, choosing it the first time: the
// reference, or for a new history its first commit.
func (w *Watcher) anchorFor(ctx context.Context, st *store.Store, j *job.Job, h hist, sel selection) (string, error) {
	anchor, err := Anchor(ctx, st, j.Key(), h.id)
	if err != nil || anchor != "" {
		return anchor, err
	}
	anchor = sel.Ref.Hash
	if anchor == "" {
		anchor = sel.New[0].Hash
	}
	w.logf("watch: %s%s: anchor %s (re-measured in every cycle)", j.Name, h.suffix(), gitrev.Short(anchor))
	return anchor, setAnchor(ctx, st, j.Key(), h.id, anchor)
}

func anchorNote(anchor string) string {
	if anchor == "" {
		return ""
	}
	return " and the anchor " + gitrev.Short(anchor)
}

func orNone(s string) string {
	if s == "" {
		return "nothing (the history starts here)"
	}
	return s
}

// withdraw marks the findings whose culprit is no longer on any watched
// branch (a force-push or a rebase dropped it): the change they report is
// not in the code being watched any more. Their runs and state stay.
func (w *Watcher) withdraw(ctx context.Context, s *measure.Session, heads []string) {
	fs, err := s.Store.Findings(ctx)
	if err != nil {
		w.logf("watch: %v", err)
		return
	}
	for _, f := range fs {
		if f.Withdrawn {
			continue
		}
		known, on := false, false
		for _, h := range heads {
			ok, err := s.Repo.IsAncestor(ctx, f.Culprit, h)
			if err != nil {
				continue // not a commit of this repository
			}
			known = true
			if ok {
				on = true
				break
			}
		}
		if known && !on {
			if err := s.Store.WithdrawFinding(ctx, f.Culprit); err != nil {
				w.logf("watch: %v", err)
				continue
			}
			w.logf("watch: finding %s withdrawn: the commit is no longer on the watched branches", gitrev.Short(f.Culprit))
		}
	}
}
