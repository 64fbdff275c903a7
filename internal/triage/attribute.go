// The experiments that equalise one kind of layout: plain (with the
// restore's environment when it shares its rounds), forced alignment and
// restore, and what each can rule out.

package triage

import (
	"context"
	"fmt"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
)

// planKind says which experiment the layout diff puts first.
type planKind int

const (
	// planNothing: no function or data object moved in its cache line;
	// the layout sweep comes first.
	planNothing planKind = iota
	// planText: a function moved (the top suspect is code, or no data
	// restore is possible): forced alignment first.
	planText
	// planData: the top suspect is a data object and a restore padding
	// exists: the restore shares the plain comparison's rounds.
	planData
)

func (k planKind) String() string {
	return [...]string{"nothing moved: layout sweep first", "code moved: forced alignment first", "data moved: restore first, with the plain comparison"}[k]
}

// order picks the plan from the layout diff.
func (e *engine) order() planKind {
	in := e.insp
	switch {
	case e.canRestore() && e.restoreKind() == layout.Object:
		return planData
	case in.textMoved || (e.canRestore() && e.restoreKind() == layout.Func):
		return planText
	}
	return planNothing
}

// canRestore reports whether there is a restore experiment: the source
// patch (built and checked, or not tried yet), or the preset's padding.
func (e *engine) canRestore() bool {
	in := e.insp
	return e.usePatch() || (in.padding != nil && in.restoreErr == nil) || (usePatches && in.patchable && !in.patchTried)
}

// restoreKind is the kind of the symbol the restore gives its offset
// back: the source patch's suspect, else the padding's.
func (e *engine) restoreKind() layout.Kind {
	in := e.insp
	switch {
	case e.usePatch():
		return in.patch.kind
	case in.padding != nil:
		return in.padding.Kind
	}
	return in.patchKind
}

// restoreSymbol is the symbol whose offset the restore gives back.
func (e *engine) restoreSymbol() string {
	if e.usePatch() {
		return e.insp.patch.symbol
	}
	if e.insp.padding != nil {
		return e.insp.padding.Symbol
	}
	return ""
}

// restoreControl is the variant of the restore experiment's unpadded
// columns.
func (e *engine) restoreControl() job.Variant {
	if e.usePatch() {
		return e.insp.patch.control
	}
	return e.insp.control
}

// dataRestore reports whether the restore experiment restores a data
// object.
func (e *engine) dataRestore() bool { return e.canRestore() && e.restoreKind() == layout.Object }

// textPatch reports whether the restore experiment is a source patch that
// gives back every function's address from the root change on.
func (e *engine) textPatch() bool { return e.usePatch() && e.insp.patch.kind == layout.Func }

// newPlain is the plain comparison. In the data-first plan its builds get
// the restore build's environment size (the restore experiment's control
// builds), so that the restore experiment can share its rounds.
func (e *engine) newPlain() *pairedOutcome {
	ts := []target{{setup: plainSetup}, {changed: true, setup: plainSetup}}
	title := "the two commits as they build"
	if e.plan0 == planData {
		c := e.restoreControl()
		ts = []target{{setup: controlSetup, variant: c}, {changed: true, setup: controlSetup, variant: c}}
		title += " (run with an environment as large as the restore build's)"
	}
	return newPaired(PlainExperiment, title, ts, []string{"base", "changed"}, 1)
}

func (e *engine) newForced() *pairedOutcome {
	v := e.lab.forced()
	return newPaired(ForcedExperiment, "both commits rebuilt with functions and loops aligned to 64 bytes ("+v.Name+")",
		[]target{{setup: alignSetup, variant: v}, {changed: true, setup: alignSetup, variant: v}},
		[]string{"base+" + v.Name, "changed+" + v.Name}, 1)
}

// newRestore is the restore experiment: base, changed and changed with
// the source patch (the seed's three columns) or, when there is none, the
// padding; the unpatched ones with an environment of the patched one's
// size. Sharing the plain comparison's builds, its later looks measure
// only the base and the patched build.
func (e *engine) newRestore() *pairedOutcome {
	c := e.restoreControl()
	ts := []target{{setup: controlSetup, variant: c}, {changed: true, setup: controlSetup, variant: c}}
	var r *pairedOutcome
	if sp := e.insp.patch; e.usePatch() {
		in := sp.info
		title := fmt.Sprintf("the changed commit rebuilt with the source patch that puts back %d bytes at %s:%d (%s), giving %s its base %s",
			in.Bytes, in.File, in.Line, in.Root, sp.symbol, map[bool]string{true: "address back, and every address after it in " + in.Section, false: "offset mod 64 back, and every offset after it in " + in.Section}[in.Exact])
		ts = append(ts, target{changed: true, setup: patchSetup, variant: sp.variant})
		r = newPaired(RestoreExperiment, title, ts, []string{"base", "changed", "changed+patch"}, 2)
	} else {
		p := e.insp.padding
		title := fmt.Sprintf("the changed commit rebuilt with %d bytes of padding in %s, restoring %s's offset %d mod 64 (it is at %d)",
			p.Bytes, p.Section, p.Symbol, p.OffA, p.OffB)
		ts = append(ts, target{changed: true, setup: restoreSetup, variant: e.insp.restore})
		r = newPaired(RestoreExperiment, title, ts, []string{"base", "changed", "changed+padding"}, 2)
	}
	if e.plan0 == planData {
		r.measured = []int{0, 2}
	}
	return r
}

// lookForced takes forced alignment's next look, and on its first says
// when the knob changed nothing in the build.
func (e *engine) lookForced(ctx context.Context) error {
	if e.forcedOut == nil {
		e.forcedOut = e.newForced()
	}
	f := e.forcedOut
	if err := e.look(ctx, f); err != nil {
		return err
	}
	if f.looks == 1 && e.lab.sameBuild(target{changed: true, setup: plainSetup}, f.ts[1]) {
		e.uninformative(f, "the forced-alignment build loads the same code and data as the plain build: the build ignores the preset's knobs ("+f.ts[1].variant.Name+")")
	}
	return e.save(ctx, "forced-alignment", nil)
}

// lookRestore takes the restore experiment's next look (with the plain
// comparison's first, in the data-first plan), and on its first says when
// the padding did not restore the symbol's offset.
func (e *engine) lookRestore(ctx context.Context) error {
	if e.restoreOut == nil {
		if err := e.preparePatch(ctx); err != nil {
			return err
		}
		if !e.canRestore() {
			// Neither the patch nor a padding: the next step is another
			// experiment.
			return nil
		}
		e.restoreOut = e.newRestore()
	}
	r := e.restoreOut
	xs := []*pairedOutcome{r}
	if r.looks == 0 && e.plain.looks == 0 {
		xs = []*pairedOutcome{e.plain, r}
	}
	if err := e.look(ctx, xs...); err != nil {
		return err
	}
	if r.looks == 1 && !e.usePatch() {
		// (A source patch was checked before it was measured.)
		if note := e.lab.checkRestore(ctx, r.ts[2], e.insp.padding); note != "" {
			e.uninformative(r, note)
		}
	}
	return e.save(ctx, "restore", nil)
}

// dataRuledOut reports whether data alignment cannot explain a change
// that forced alignment keeps: no data object moved in its cache line, or
// restoring the moved one's offset keeps the change in the same direction.
func (e *engine) dataRuledOut() bool {
	if !e.insp.dataMoved {
		return true
	}
	r := e.restoreOut
	return e.dataRestore() && r.different() && e.forcedOut.different() && r.sign() == e.forcedOut.sign()
}

// textRuledOut reports the same of code alignment for a change that the
// data restore keeps: no function moved, or forced alignment keeps it too.
func (e *engine) textRuledOut() bool {
	if !e.insp.textMoved {
		return true
	}
	f := e.forcedOut
	return f.different() && e.restoreOut.different() && f.sign() == e.restoreOut.sign()
}

// equalized returns the experiment whose change, with the moved layout
// equalised and the other kind ruled out, is evidence of a real change
// (nil when none): forced alignment (which does not move data), or the
// restore of a data object (which does not move code).
func (e *engine) equalized() *pairedOutcome {
	if f := e.forcedOut; f.different() && e.dataRuledOut() {
		return f
	}
	if r := e.restoreOut; e.dataRestore() && r.different() && e.textRuledOut() {
		return r
	}
	// A source patch that gives back every function's address from the
	// root change on equalises code as forced alignment does, with no
	// data object moved.
	if r := e.restoreOut; e.textPatch() && r.different() && !e.insp.dataMoved {
		return r
	}
	return nil
}
