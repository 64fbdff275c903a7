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
	// CPUMode is where runs are pinned, as perfbot compare's --cpu:
	// auto (the quietest CPU, calibrated), none, or a CPU number; "" takes
	// each job's run.cpu (auto by default). Chosen per job and cycle (see
	// cpu).
	CPUMode  string
	Progress measure.Progress
	Logf     func(format string, args ...any)
	// Wait is told when another perfbot holds the machine.
	Wait func(holder string)
	// Places says where each job is measured and kept: nil is this
	// machine (Local); a fleet's server gives the machines of each job's
	// class and the fleet's store (package fleet).
	Places Places
	// Now is the clock (tests set it).
	Now func() time.Time

	// memos keep the histories' comparisons between cycles, by store:
	// each cycle compares only the commits tested since (history.Memo).
	memoMu sync.Mutex
	memos  map[string]*history.Memo

	// cpus are this cycle's choices, by mode.
	cpus map[string]int
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
	Findings          []string      // culprits of new or updated findings
	Broken            []BrokenBuild // commits whose build failed for good in this cycle
	Errors            []error       // per job and branch; the cycle goes on
}

// TestedCommit is one commit a cycle measured.
type TestedCommit struct {
	Job    string // the atomic job's name
	Branch string
	Commit gitrev.Commit
	Ref    string
	// Unchanged, when not "", says why the commit was not measured (0
	// runs): its diff from Ref touches only paths the job ignores.
	Unchanged string
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
	w.cpus = map[string]int{} // the machine's quiet CPU is found again each cycle
	cycle := rep.Started.UnixNano()
	for _, jc := range w.Config.Jobs {
		jobs, err := job.Load(jc.File)
		w.recordLoad(ctx, jc, cycle, rep.Started, err)
		if err != nil {
			rep.Errors = append(rep.Errors, err)
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
	s, err := w.places().Open(ctx, jc, j, w.Wait)
	if err != nil {
		return err
	}
	defer s.close()
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
			jch := jc
			var err error
			if jch.Anchor, err = w.anchorMode(ctx, s.Store, jc, j.Name, j.Key(), h); err == nil {
				err = w.measureBranch(ctx, s, jch, j, h, branch, lists[i], cycle, rep)
			}
			if err == nil {
				err = w.detect(ctx, s, jch, j, h, branch, lists[i], rep)
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
// (and the history's anchor, when the job keeps one), then the next
// commits of a backfill (start: or --since), in rounds of their own.
func (w *Watcher) measureBranch(ctx context.Context, s *Place, jc JobConfig, j *job.Job, h hist, branch string, list []gitrev.Commit, cycle int64, rep *CycleReport) error {
	k, bb, err := loadKnown(ctx, s.Store, j.Key(), h.id)
	if err != nil {
		return err
	}
	bf, err := w.backfill(ctx, s, j, h, branch, list, k)
	if err != nil {
		return err
	}
	budget := w.Config.MaxCommits
	// A backfill of a new history ends at the head it began with, which
	// its first batch tests: the commits after it are chained to it.
	if bf == nil || k.tested[list[bf.until].Hash] {
		sel := choose(list, k, w.Config.Test, w.Config.MaxCommits)
		if *k.err != nil {
			return *k.err
		}
		if err := w.measureSel(ctx, s, jc, j, h, branch, sel, bb, cycle, rep); err != nil {
			return err
		}
		budget -= len(sel.New)
		if sel.Ref.Hash != "" {
			if err := w.measureRetries(ctx, s, jc, j, h, branch, olderRetries(list, k, sel.Ref), bb, cycle, rep); err != nil {
				return err
			}
		}
	}
	if bf == nil {
		return nil
	}
	if k, bb, err = loadKnown(ctx, s.Store, j.Key(), h.id); err != nil {
		return err
	}
	sel, done := chooseBackfill(list, bf.since, bf.until, k, w.Config.Test, max(budget, 1))
	if *k.err != nil {
		return *k.err
	}
	if done {
		return w.endBackfill(ctx, s.Store, j, h, bf)
	}
	w.logf("watch: %s on %s%s: backfill %s..%s: %d commits this cycle", j.Name, branch, h.suffix(),
		list[bf.since].Short(), list[bf.until].Short(), len(sel.New))
	if err := w.measureSel(ctx, s, jc, j, h, branch, sel, bb, cycle, rep); err != nil {
		return err
	}
	if sel.Ref.Hash == "" {
		return nil
	}
	return w.measureRetries(ctx, s, jc, j, h, branch, olderRetries(list[bf.since:bf.until+1], k, sel.Ref), bb, cycle, rep)
}

// measureRetries builds once more, and measures, each commit whose first
// build failed behind the reference, in rounds of its own.
func (w *Watcher) measureRetries(ctx context.Context, s *Place, jc JobConfig, j *job.Job, h hist, branch string, sels []selection,
	bb map[string]store.BrokenBuild, cycle int64, rep *CycleReport) error {
	for _, sel := range sels {
		if err := w.measureSel(ctx, s, jc, j, h, branch, sel, bb, cycle, rep); err != nil {
			return err
		}
	}
	return nil
}

// measureSel measures a selection in whole interleaved rounds and records
// each new commit as tested (or its build as broken).
func (w *Watcher) measureSel(ctx context.Context, s *Place, jc JobConfig, j *job.Job, h hist, branch string, sel selection,
	bb map[string]store.BrokenBuild, cycle int64, rep *CycleReport) error {
	if len(sel.New) == 0 {
		return nil
	}
	if err := retryBuilds(ctx, s.Store, j, h, sel, bb); err != nil {
		return err
	}
	measured, skipped, err := splitUnchanged(ctx, s.Repo, j, sel)
	if err != nil {
		return err
	}
	if len(measured) == 0 {
		// Each equals the reference, tested in an earlier cycle.
		return w.recordUnchanged(ctx, s.Store, j, h, branch, skipped, cycle, rep)
	}
	sel.New = measured
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
	cpu, err := w.cpu(ctx, s, j, jc)
	if err != nil {
		return err
	}
	w.logf("watch: %s on %s%s: testing %d new commits against %s%s", j.Name, branch, h.suffix(), len(sel.New), orNone(sel.Ref.Short()), anchorNote(anchor))
	opt := s.Options(cpu)
	opt.WholeRounds, opt.Retry, opt.Progress, opt.Wait = true, true, w.Progress, w.Wait
	out, err := measure.Measure(ctx, j, targets, opt)
	if err != nil {
		return err
	}
	tested := map[string]bool{sel.Ref.Hash: sel.Ref.Hash != ""}
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
			// Not tested: never a reference. Built once more in a later
			// cycle, then passed over.
			if err := w.brokenBuild(ctx, s, jc, j, h, branch, t, bb, rep); err != nil {
				return err
			}
			continue
		}
		rec := &store.Tested{Job: j.Key(), Variant: h.id, Commit: t.Target.Commit.Hash, Branch: branch, Ref: sel.Ref.Hash,
			Session: out.Session, Rounds: out.Rounds, Cycle: cycle, When: time.Now()}
		if t.Build != nil {
			rec.Layout = layoutSummary(t.Build, j.Build.Artifacts)
		}
		if err := s.Store.PutTested(ctx, rec); err != nil {
			return err
		}
		tested[t.Target.Commit.Hash] = true
		rep.Tested = append(rep.Tested, TestedCommit{Job: j.Name, Branch: branch, Commit: t.Target.Commit, Ref: sel.Ref.Hash})
	}
	// A commit unchanged by its diff is recorded once the commit it
	// equals is tested; one that equals a broken build stays new, and a
	// later cycle sees it again (against the last tested commit).
	var equal []unchangedCommit
	for _, u := range skipped {
		if tested[u.Same] {
			equal = append(equal, u)
		}
	}
	return w.recordUnchanged(ctx, s.Store, j, h, branch, equal, cycle, rep)
}

// anchorFor returns the history's anchor, choosing it the first time: the
// reference, or for a new history its first commit.
func (w *Watcher) anchorFor(ctx context.Context, st *store.Store, j *job.Job, h hist, sel selection) (string, error) {
	anchor, err := history.Anchor(ctx, st, j.Key(), h.id)
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
func (w *Watcher) withdraw(ctx context.Context, s *Place, heads []string) {
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
