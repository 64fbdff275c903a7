// The builds the engine measures (target, setup) and the lab interface
// that builds, measures and inspects them.

package triage

import (
	"context"
	"fmt"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/metric"
)

// setup says what a target's build is, for labels and for the simulator.
type setup int

const (
	plainSetup   setup = iota // the commit as it builds
	alignSetup                // forced alignment
	layoutSetup               // layout k of the sweep (k >= 1; layout 0 is plain)
	controlSetup              // the restore experiment's unpadded builds
	restoreSetup              // the changed commit with the restore padding
	patchSetup                // the changed commit with the source patch
)

// target is one build to measure: a commit under a variant.
type target struct {
	changed bool
	setup   setup
	layout  int // layoutSetup only
	variant job.Variant
}

func (t target) String() string {
	s := "base"
	if t.changed {
		s = "changed"
	}
	if t.variant.Name != "" {
		s += "+" + t.variant.Name
	}
	return s
}

// key identifies the target's runs.
func (t target) key() string {
	return fmt.Sprintf("%v/%s/%v/%s", t.changed, t.variant.Name, t.variant.Env, t.variant.Key())
}

// inspection is what the layout diff of the two plain builds says.
type inspection struct {
	identical bool
	suspects  []Suspect
	// textMoved and dataMoved say whether any function or data object
	// changed its offset in its cache line (or the lines it touches).
	textMoved, dataMoved bool
	// padding is the restore proposal for the top suspect; nil when none.
	padding *layout.Padding
	// restore and control are the restore experiment's variants: the
	// changed commit padded, and both commits unpadded with an environment
	// of the same size; restoreErr says why there are none.
	restore, control job.Variant
	restoreErr       error
	// patchable is true when the layout diff names a root change that a
	// source patch can undo for the restore's suspect (of patchKind);
	// patchTried once preparePatch ran, and patch is its result (nil when
	// none was made).
	patchable  bool
	patchKind  layout.Kind
	patchTried bool
	patch      *srcPatch
	notes      []string
}

// lab builds and measures targets; the real one uses packages build,
// measure and store, the tests a simulator.
type lab interface {
	// measure makes sure every target has n runs and returns each
	// target's metric value by pair key (machine, session, run number and
	// the target's layout), and why each of its failed runs failed, by
	// pair key. With whole, the n runs are whole rounds, each running
	// every target once in one session, so that targets measured earlier
	// (the restore experiment's base) are measured again side by side with
	// new ones; without, runs 1..n of each target are reused one by one
	// (the sweep, whose pairs are per layout). Runs of two targets pair
	// only when their keys are equal: one round of one session.
	measure(ctx context.Context, ts []target, n int, whole bool) (vals []runVals, failed []runFails, err error)
	// metricInfo returns the metric triaged, its unit and direction; valid
	// after the first measure.
	metricInfo() (name, unit string, better metric.Better)
	// inspect compares the layouts of the two plain builds.
	inspect(ctx context.Context) (*inspection, error)
	// forced is the forced-alignment variant, layouts the sweep's.
	forced() job.Variant
	layouts(n int) []job.Variant
	// sameBuild reports whether two built targets produced identical
	// artifacts (false when unknown).
	sameBuild(a, b target) bool
	// checkRestore says, after the restore target was built, whether the
	// padding restored the symbol's offset ("" when it did or cannot tell).
	checkRestore(ctx context.Context, t target, p *layout.Padding) string
	// sourcePatch makes, builds and checks the source patch for the
	// restore's suspect (inspection.patchable); the patch says why when it
	// cannot be used. Only the context's end is an error.
	sourcePatch(ctx context.Context) (*srcPatch, error)
}
