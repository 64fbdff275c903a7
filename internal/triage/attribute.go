// Attribution: the forced-alignment and restore experiments, and the order
// they run in.

package triage

import (
	"context"
	"fmt"

	"github.com/perfbot/perfbot/internal/layout"
)

// attribute runs forced alignment and the restore experiment, in the order
// the top suspect suggests, and returns the alignment verdict of the first
// that explains the plain change ("" when neither does).
func (e *engine) attribute(ctx context.Context) (Verdict, error) {
	dataFirst := e.insp.padding != nil && e.insp.padding.Kind == layout.Object && e.insp.restoreErr == nil
	steps := []string{"forced", "restore"}
	if dataFirst {
		steps = []string{"restore", "forced"}
	}
	for _, s := range steps {
		switch s {
		case "forced":
			if err := e.runForced(ctx); err != nil {
				return "", err
			}
			if e.forcedOut.same() {
				return TextAlignment, nil
			}
		case "restore":
			if e.insp.padding == nil || e.insp.restoreErr != nil {
				continue
			}
			if err := e.runRestore(ctx); err != nil {
				return "", err
			}
			if e.restoreOut.same() {
				if e.insp.padding.Kind == layout.Func {
					return TextAlignment, nil
				}
				return DataAlignment, nil
			}
		}
	}
	return "", nil
}

func (e *engine) runForced(ctx context.Context) error {
	v := e.lab.forced()
	out, err := e.paired(ctx, ForcedExperiment, "both commits rebuilt with functions and loops aligned to 64 bytes ("+v.Name+")",
		[]target{{setup: alignSetup, variant: v}, {changed: true, setup: alignSetup, variant: v}},
		[]string{"base+" + v.Name, "changed+" + v.Name}, 1, false)
	if err != nil {
		return err
	}
	if e.lab.sameBuild(target{changed: true, setup: plainSetup}, target{changed: true, setup: alignSetup, variant: v}) {
		out.informative = false
		out.exp.Reason = "the forced-alignment build is byte-identical to the plain build: the build ignores the preset's knobs (" + v.Name + ")"
		e.res.Notes = append(e.res.Notes, out.exp.Reason)
	}
	e.forcedOut = out
	return e.save(ctx, "forced-alignment", nil)
}

func (e *engine) runRestore(ctx context.Context) error {
	p := e.insp.padding
	ts := []target{
		{setup: controlSetup, variant: e.insp.control},
		{changed: true, setup: controlSetup, variant: e.insp.control},
		{changed: true, setup: restoreSetup, variant: e.insp.restore},
	}
	title := fmt.Sprintf("the changed commit rebuilt with %d bytes of padding in %s, restoring %s's offset %d mod 64 (it is at %d)",
		p.Bytes, p.Section, p.Symbol, p.OffA, p.OffB)
	out, err := e.paired(ctx, RestoreExperiment, title, ts, []string{"base", "changed", "changed+padding"}, 2, false)
	if err != nil {
		return err
	}
	if note := e.lab.checkRestore(ctx, ts[2], p); note != "" {
		out.informative = false
		out.exp.Reason = note
		e.res.Notes = append(e.res.Notes, note)
	}
	e.restoreOut = out
	return e.save(ctx, "restore", nil)
}
