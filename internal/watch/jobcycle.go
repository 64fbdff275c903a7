package watch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
)

// runJob runs one atomic job's cycle (job), turning a panic into the
// job's error so that the other jobs go on, and records the job's cycle
// in its store with its errors (store.CycleRecord): a job that fails
// NoticeAfter cycles in a row sends a notice (notice.go). An interrupted
// cycle (ctx) is not recorded: it is neither a failure nor done.
func (w *Watcher) runJob(ctx context.Context, jc JobConfig, j *job.Job, cycle int64, rep *CycleReport) (err error) {
	start := time.Now()
	nerr, ntested := len(rep.Errors), len(rep.Tested)
	panicked := false
	func() {
		defer func() {
			if r := recover(); r != nil {
				panicked = true
				err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		err = w.job(ctx, jc, j, cycle, rep)
	}()
	if ctx.Err() != nil {
		return err
	}
	errs := slices.Clone(rep.Errors[nerr:])
	if err != nil {
		errs = append([]error{err}, errs...)
	}
	w.recordCycle(ctx, jc, store.CycleRecord{Job: j.Key(), Name: j.Name, Cycle: cycle, Started: start, Finished: time.Now(),
		Tested: len(rep.Tested) - ntested, Error: errorText(errs), Panicked: panicked}, false)
	return err
}

// recordLoad records the cycle of a job file, under the file's name
// (there is no job key): a file that did not load (err) fails its cycle;
// one that loads again after failing ends its streak, so that it is told
// as recovered and a later failure starts a new streak (with its own
// notice). A file that keeps loading records nothing.
func (w *Watcher) recordLoad(ctx context.Context, jc JobConfig, cycle int64, started time.Time, err error) {
	c := store.CycleRecord{Job: "file:" + jc.File, Name: filepath.Base(jc.File), Cycle: cycle,
		Started: started, Finished: time.Now()}
	if err != nil {
		c.Error = errorText([]error{err})
	}
	w.recordCycle(ctx, jc, c, err == nil)
}

// recordCycle stores a job's cycle in the store next to its job file,
// sends the failure notice when the job has now failed NoticeAfter cycles
// in a row (once per streak), and logs (and tells, when the failure was
// told) a job that goes through again after failing.
//
// With onlyAfterFailure, a cycle that went through is recorded only when
// it ends a failure streak.
func (w *Watcher) recordCycle(ctx context.Context, jc JobConfig, c store.CycleRecord, onlyAfterFailure bool) {
	st, done, err := w.places().Store(ctx, jc)
	if err != nil {
		w.logf("watch: recording the cycle of %s: %v", c.Name, err)
		return
	}
	defer done()
	before, err := st.FailStreak(ctx, c.Job)
	if err != nil {
		w.logf("watch: recording the cycle of %s: %v", c.Name, err)
		return
	}
	if onlyAfterFailure && !c.Failed() && len(before) == 0 {
		return
	}
	if err := st.PutCycle(ctx, &c); err != nil {
		w.logf("watch: recording the cycle of %s: %v", c.Name, err)
		return
	}
	if !c.Failed() {
		if len(before) > 0 {
			w.logf("watch: %s: its cycle went through again after %d failed cycles in a row", c.Name, len(before))
			if noticed(before) {
				w.notify(ctx, recoveryNotice(c, before))
			}
		}
		return
	}
	streak := append([]store.CycleRecord{c}, before...)
	if len(streak) < w.Config.NoticeAfter || noticed(streak) {
		return
	}
	if !w.notify(ctx, failureNotice(c, streak)) {
		return // not recorded: the next failed cycle tries again
	}
	c.Noticed = true
	if err := st.PutCycle(ctx, &c); err != nil {
		w.logf("watch: recording the notice of %s: %v", c.Name, err)
	}
}

func noticed(cs []store.CycleRecord) bool {
	for _, c := range cs {
		if c.Noticed {
			return true
		}
	}
	return false
}

// errorText is the errors one a line, as the store can hold them.
func errorText(errs []error) string {
	if len(errs) == 0 {
		return ""
	}
	s := errors.Join(errs...).Error()
	return strings.ReplaceAll(strings.ToValidUTF8(s, "?"), "\x00", "?")
}
