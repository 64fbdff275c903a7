package measure

import (
	"bytes"
	"context"
	"os"
	"path/filepath"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/relevance"
)

// IdenticalNote is what a report says of a revision whose build artifacts
// load the same bytes as its base's while its diff touches paths the job
// does not ignore: it is measured with one minimal look, not skipped.
const IdenticalNote = "the builds' artifacts are byte-identical; a script or data file outside them may still matter"

// MinimalLook is the runs of each revision of the one look taken when
// every measured revision's artifacts are byte-identical to the base's:
// the fewest a comparison takes. When that look sees a change (the lkp
// rule or the test), the full runs are taken.
const MinimalLook = MinCompareRuns

// Irrelevant says, for each commit after the first (the base), why its
// diff from the base cannot matter to job j (the relevance package's
// reason), or "" where it can. A job without ignore: globs gets all "".
func Irrelevant(ctx context.Context, repo *gitrev.Repo, j *job.Job, commits []gitrev.Commit) ([]string, error) {
	reasons := make([]string, len(commits))
	if len(j.Ignore) == 0 || len(commits) < 2 {
		return reasons, nil
	}
	for i, c := range commits[1:] {
		r, err := relevance.Check(ctx, repo, j, commits[0].Hash, c.Hash)
		if err != nil {
			return nil, err
		}
		reasons[i+1] = r.Reason()
	}
	return reasons, nil
}

// SameArtifacts reports whether two builds' artifacts (build.artifacts)
// are identical: byte for byte or, for ELF files, in what they load
// (layout.SameImage: builds with -g differ in their debug information and
// build ID). A job that lists no artifacts, or a build whose artifact
// cannot be read (a remote build), never counts as identical. Identical
// artifacts do not prove identical programs: a script or a data file may
// live outside them. A fleet's builds, whose artifacts are not here, are
// compared by the hashes their builders give (byte for byte).
func SameArtifacts(j *job.Job, a, b *build.Result) bool {
	if len(j.Build.Artifacts) == 0 || a == nil || b == nil {
		return false
	}
	if len(a.Artifacts) > 0 && len(b.Artifacts) > 0 {
		for _, f := range j.Build.Artifacts {
			if ha, ok := a.Artifacts[f]; !ok || ha != b.Artifacts[f] {
				return false
			}
		}
		return true
	}
	if a.Record == nil || b.Record == nil {
		return false
	}
	for _, f := range j.Build.Artifacts {
		pa, pb := filepath.Join(a.Record.ArtifactDir, f), filepath.Join(b.Record.ArtifactDir, f)
		x, err1 := os.ReadFile(pa)
		y, err2 := os.ReadFile(pb)
		if err1 != nil || err2 != nil {
			return false
		}
		if bytes.Equal(x, y) {
			continue
		}
		if same, err := layout.SameImage(pa, pb); err != nil || !same {
			return false
		}
	}
	return true
}

// identicalTargets builds the targets (nothing is run) and says, for each
// target after the first, whether its artifacts are identical to the
// first's. A job that lists no artifacts is not built here. A build that
// fails counts as different: the measurement reports its error.
func identicalTargets(ctx context.Context, j *job.Job, targets []Target, opt Options) ([]bool, error) {
	same := make([]bool, len(targets))
	if len(j.Build.Artifacts) == 0 || len(targets) < 2 {
		return same, nil
	}
	ts := make([]Target, len(targets))
	for i, t := range targets {
		t.Runs = -1 // built and read, not run
		ts[i] = t
	}
	opt.WholeRounds = false
	out, err := Measure(ctx, j, ts, opt)
	if err != nil {
		return nil, err
	}
	base := out.Targets[0].Build
	for i := 1; i < len(ts); i++ {
		same[i] = SameArtifacts(j, base, out.Targets[i].Build)
	}
	return same, nil
}

// allSet reports whether xs[1:] are all true (and there is one).
func allSet(xs []bool) bool {
	if len(xs) < 2 {
		return false
	}
	for _, x := range xs[1:] {
		if !x {
			return false
		}
	}
	return true
}

// kpiChanged reports whether any of the job's own metrics changed in t, by
// the lkp rule or the test: a minimal look that sees that is not enough.
func kpiChanged(t *compare.Table) bool {
	for i := range t.Rows {
		if r := &t.Rows[i]; r.KPI && r.Changed() {
			return true
		}
	}
	return false
}

// withUnchanged puts the columns of the commits that were not measured
// (reasons[i] != "") back in their places in t, a table of the others:
// 0 runs, no samples, the reason in Column.Unchanged. t nil (nothing was
// measured) gives a table of such columns and no rows.
func withUnchanged(t *compare.Table, commits []gitrev.Commit, variant string, reasons []string, alpha float64) *compare.Table {
	if t == nil {
		t = &compare.Table{Alpha: alpha, Paired: true}
	}
	cols := make([]compare.Column, 0, len(commits))
	from := make([]int, 0, len(commits)) // column of t, -1 for an unmeasured one
	k := 0
	for i, c := range commits {
		if reasons[i] != "" || k >= len(t.Columns) {
			cols = append(cols, compare.Column{ID: c.Hash, Subject: c.Subject, Variant: variant, Unchanged: reasons[i]})
			from = append(from, -1)
			continue
		}
		cols = append(cols, t.Columns[k])
		from = append(from, k)
		k++
	}
	for ri := range t.Rows {
		r := &t.Rows[ri]
		cells := make([]compare.Cell, len(cols))
		for i, f := range from {
			if f >= 0 {
				cells[i] = r.Cells[f]
			}
		}
		r.Cells = cells
	}
	t.Columns = cols
	return t
}
