package watch

import (
	"context"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
)

// measureLook measures a selection's targets (the reference first, then
// the new commits, then the anchor if any) as compare does when the
// builds cannot differ: when the reference and every new commit build
// byte-identical artifacts (measure.SameArtifacts), one look of
// measure.MinimalLook runs each, and the job's full runs only when that
// look sees a change of one of the job's metrics among the reference and
// the new commits (a script or data file outside the artifacts can
// matter). identical reports that the look was enough. A selection
// without a reference (a history's first commit) is measured in full.
func (w *Watcher) measureLook(ctx context.Context, j *job.Job, h hist, branch string, sel selection, targets []measure.Target,
	opt measure.Options, alpha float64) (out *measure.Outcome, identical bool, err error) {
	n := 1 + len(sel.New) // the reference and the new commits; the anchor after them
	if sel.Ref.Hash == "" || j.Runs <= measure.MinimalLook || len(targets) < n {
		out, err = measure.Measure(ctx, j, targets, opt)
		return out, false, err
	}
	same, err := measure.IdenticalTargets(ctx, j, targets[:n], opt)
	if err != nil {
		return nil, false, err
	}
	if !measure.AllIdentical(same) {
		out, err = measure.Measure(ctx, j, targets, opt)
		return out, false, err
	}
	w.logf("watch: %s on %s%s: %s; one look of %d runs", j.Name, branch, h.suffix(), measure.IdenticalNote, measure.MinimalLook)
	look := opt
	look.Runs = measure.MinimalLook
	if out, err = measure.Measure(ctx, j, targets, look); err != nil {
		return nil, false, err
	}
	t, err := out.Table(ctx, alpha)
	if err == nil && !measure.LookSeesChange(t, n) {
		return out, true, nil
	}
	if err != nil {
		w.logf("watch: %s on %s%s: the look could not be read (%v); taking the full %d runs", j.Name, branch, h.suffix(), err, j.Runs)
	} else {
		w.logf("watch: %s on %s%s: the look sees a change the artifacts do not; taking the full %d runs", j.Name, branch, h.suffix(), j.Runs)
	}
	out, err = measure.Measure(ctx, j, targets, opt)
	return out, false, err
}
