package main

import (
	"fmt"

	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/report"
)

// layoutSourcePatch is perfbot layout diff --patch SRCDIR: the source
// patch that restores A's layout in B's source tree, or, with
// --patch-check, the check of a build of the patched source.
func layoutSourcePatch(a *app, f layoutFlags, ba, bb *layout.Binary, d *layout.DiffResult) error {
	var root layout.PatchRoot
	var err error
	suspect := f.symbol
	if f.patchRoot != "" {
		root, err = layout.PatchRootNamed(d, f.patchRoot)
	} else {
		var c *layout.Change
		root, c, err = layout.PatchRootFor(d, f.symbol)
		if c != nil {
			suspect = c.Name()
		}
	}
	if err != nil {
		return fmt.Errorf("layout diff --patch: %w", err)
	}
	sp, err := layout.SourcePatchWith(ba, bb, root, layout.PatchOptions{SrcDir: f.patch, Suspect: suspect})
	if err != nil {
		return fmt.Errorf("layout diff --patch: %w", err)
	}
	if f.patchCheck == "" {
		if f.format == "json" {
			return report.WriteSrcPatchJSON(a.stdout, sp, nil)
		}
		return report.WriteSrcPatchText(a.stdout, sp)
	}
	pc, err := layout.Open(f.patchCheck)
	if err != nil {
		return fmt.Errorf("layout diff --patch-check: %w", err)
	}
	r := sp.Check(pc, ba)
	if f.format == "json" {
		err = report.WriteSrcPatchJSON(a.stdout, sp, &r)
	} else {
		err = report.WriteSrcPatchCheck(a.stdout, sp, r)
	}
	if err == nil && !r.Restored {
		return exitCodeError{code: 1, msg: "layout diff --patch-check: the patched build does not have the old layout back"}
	}
	return err
}
