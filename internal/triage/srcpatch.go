// The seed's proof as a measured column: the source patch that puts the
// root change's bytes back at its spot (layout.SourcePatch), made from a
// -g rebuild's DWARF, applied to the changed commit in its own worktree,
// built, and checked with the layout diff before it is measured.

package triage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/stats"
)

// SourcePatch is the source patch a triage made: one definition of the
// root change's size and alignment put back at its spot in its own source
// file (layout.SourcePatch), so that every address after it comes back.
// It was applied to the changed commit in the build's own worktree,
// built like the plain build, and checked with the layout diff against
// the base build; only a patch that gives the layout back is measured.
type SourcePatch struct {
	// Root is the change it undoes, e.g. "removed data_range (.bss)", and
	// Suspect the layout suspect it was made for.
	Root    string
	Suspect string
	// File and Line are the spot (the line the definition goes before).
	File string
	Line int
	// Section, Bytes and Align describe the definition; Exact is true when
	// the addresses come back, false when only the offsets mod 64 can (a
	// symbol that grew).
	Section      string
	Bytes, Align uint64
	Exact        bool
	// Diff is the patch in git's format: git apply in a checkout of the
	// changed commit.
	Diff string
	// Check is the layout diff's check of the patched build against the
	// base build; Restored is true when the addresses came back.
	Check    string
	Restored bool
	// Identical is true when the patched build loads the same code and
	// data as the base build: the patch undid the commit's whole change
	// to the build, so that change is the layout shift alone.
	Identical bool
	// Notes say what the patch assumed or could not do.
	Notes []string
}

// patchName is the source-patched variant's name: as long as
// knobs.RestoreName and "control", so that PERFBOT_VARIANT has the same
// size in every column.
const patchName = "patched"

// usePatches turns the source-patch restore on (a variable for the
// simulations that compare designs: PERFBOT_TRIAGE_DESIGN=nopatch).
var usePatches = true

// srcPatch is a source patch as the engine uses it.
type srcPatch struct {
	// variant builds the changed commit with the patch applied; control is
	// the unpadded columns' variant, its environment as large.
	variant, control job.Variant
	kind             layout.Kind // the suspect's: Object or Func
	symbol           string      // the suspect it restores
	info             *SourcePatch
	// ok is true when the patched build has the base's layout back:
	// only then is it measured; reason says why not.
	ok     bool
	reason string
	// identical is true when the patched build loads the same code and
	// data as the base build (every artifact; only symbol names and debug
	// information differ): the commit's change to the build is then the
	// layout shift alone (sameImage).
	identical bool
}

// preparePatch makes, builds and checks the source patch once, when the
// layout diff named a root change a patch can undo. A patch that does not
// give the layout back is reported and not used; the restore falls back
// to the preset's padding.
func (e *engine) preparePatch(ctx context.Context) error {
	in := e.insp
	if in.patchTried || !usePatches {
		return nil
	}
	in.patchTried = true
	if !in.patchable {
		return nil
	}
	p, err := e.lab.sourcePatch(ctx)
	if err != nil {
		return err
	}
	in.patch = p
	if p.info != nil {
		e.res.SourcePatch = p.info
	}
	if !p.ok {
		note := "the source patch"
		if p.info != nil {
			note += fmt.Sprintf(" (%s at %s:%d)", p.info.Root, p.info.File, p.info.Line)
		}
		note += " was not measured: " + p.why()
		if in.padding != nil && in.restoreErr == nil {
			note += "; the restore pads the section instead"
		}
		e.res.Notes = append(e.res.Notes, note)
		e.logf("source patch: %s", note)
		return nil
	}
	e.logf("source patch: %s at %s:%d, %s; loads the base build's code and data: %v", p.info.Root, p.info.File, p.info.Line, p.info.Check, p.identical)
	return nil
}

// why says why a patch is not used.
func (p *srcPatch) why() string {
	if p.info != nil && p.info.Check != "" && !p.info.Restored {
		return "the patched build does not have the base's layout back (" + p.info.Check + ")"
	}
	return p.reason
}

// usePatch reports whether the restore experiment measures the source
// patch (rather than the preset's padding).
func (e *engine) usePatch() bool { return e.insp.patch != nil && e.insp.patch.ok }

// sourcePatch makes the source patch for the restore's suspect: the
// root change from the plain builds' layout diff, its spot from the DWARF
// of both commits rebuilt with debug information (the preset's DebugInfo,
// whose layout must be the plain build's), the changed commit built with
// the patch in its own worktree, and the check that the addresses came
// back. A patch that cannot be made or does not restore is returned with
// ok false and the reason; only the context's end is an error.
func (l *storeLab) sourcePatch(ctx context.Context) (*srcPatch, error) {
	p := &srcPatch{}
	fail := func(format string, args ...any) (*srcPatch, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p.reason = fmt.Sprintf(format, args...)
		return p, nil
	}
	dp, ok := l.preset.(knobs.DebugInfo)
	if !ok || l.patchSuspect == nil {
		return fail("the %s preset cannot build with debug information, which places one", l.preset.Name())
	}
	root, c := l.patchRoot, l.patchSuspect
	p.kind, p.symbol = c.B.Kind, c.Name()
	dv := dp.DebugInfo()
	var dbg [2]*layout.Binary
	var dbgChanged *build.Result
	for i, commit := range []gitrev.Commit{l.base, l.changed} {
		r, err := l.build(ctx, commit, dv)
		if err != nil {
			return fail("the %s build of %s failed: %v", dv.Name, commit.Short(), firstLine(err))
		}
		b, err := layout.Open(filepath.Join(r.Record.ArtifactDir, l.artifact))
		if err != nil {
			return fail("reading the %s build of %s: %v", dv.Name, commit.Short(), err)
		}
		if err := layout.SameLayout(l.plain[i], b); err != nil {
			return fail("the %s build of %s (-g) does not have the plain build's layout, so its DWARF cannot place the patch: %v", dv.Name, commit.Short(), err)
		}
		dbg[i] = b
		dbgChanged = r
	}
	sp, err := layout.SourcePatchWith(dbg[0], dbg[1], root, layout.PatchOptions{SrcDir: dbgChanged.Worktree, Suspect: c.Name()})
	if err != nil {
		return fail("%v", err)
	}
	p.info = &SourcePatch{Root: root.String(), Suspect: c.Name(), File: sp.File, Line: sp.Line, Section: sp.Section,
		Bytes: sp.Bytes, Align: sp.Align, Exact: sp.Exact, Diff: sp.Diff, Notes: sp.Notes}
	// Built like the plain build (no wrappers), with an environment as
	// large as the control columns'.
	p.variant = job.Variant{Name: patchName, Env: map[string]string{knobs.EnvEnvPad: ""}, Patch: sp.Diff}
	p.control = l.control(p.variant)
	r, err := l.build(ctx, l.changed, p.variant)
	if err != nil {
		return fail("the patched build of %s failed: %v", l.changed.Short(), firstLine(err))
	}
	pb, err := layout.Open(filepath.Join(r.Record.ArtifactDir, l.artifact))
	if err != nil {
		return fail("reading the patched build: %v", err)
	}
	chk := sp.Check(pb, l.plain[0])
	p.info.Check, p.info.Restored = chk.String(), chk.Restored
	p.ok = chk.Restored
	p.identical = p.ok && sameArtifacts(l.opt.Job, l.artifacts[target{setup: plainSetup}.key()], r)
	p.info.Identical = p.identical
	return p, nil
}

// build builds commit under variant v, counting the build.
func (l *storeLab) build(ctx context.Context, commit gitrev.Commit, v job.Variant) (*build.Result, error) {
	r, err := l.opt.Env.Builder.Build(ctx, l.opt.Job, commit, v)
	if err != nil {
		return nil, err
	}
	if !l.builds[r.Record.Key] && !r.Cached {
		l.newBuilds++
	}
	l.builds[r.Record.Key] = true
	return r, nil
}

// patchRootOf finds the root change a source patch can undo for the
// restore's suspect (the padding's symbol, else the top suspect whose
// offset mod 64 changed), or says why there is none.
func patchRootOf(d *layout.DiffResult, p *layout.Padding) (layout.PatchRoot, *layout.Change, error) {
	sym := ""
	if p != nil {
		sym = p.Symbol
	}
	root, c, err := layout.PatchRootFor(d, sym)
	if err == nil && c == nil {
		err = errors.New("no suspect")
	}
	return root, c, err
}

// firstLine is an error's first line (a failed build's error ends with its
// log).
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return strings.TrimSuffix(s, ":")
}

// identityCheckLevel is the level at which the first look of an
// identical patched build must show no sign of a change (sameProgram):
// less strict than the looks' own levels (about 0.009), so that a change
// outside the artifacts sends the restore back to its equivalence test (a
// variable for the simulations).
var identityCheckLevel = 0.05

// sameProgram decides the restore's first look by identity: a patched
// build that loads the base build's code and data is the base program,
// so the restore has no change left to measure. The look must agree: no
// sign of a change (p >= identityCheckLevel) and an estimate within half
// the effect, because the runs could still see a change outside the
// artifacts (a script or data file the commit changed, which the patched
// worktree has too). Otherwise the restore goes on to its equivalence
// test as any other. The simulation weighs the guard (a real change of 8
// to 15 % in a script beside an unused object removed): with it, no more
// wrong verdicts than without the rule. It reports whether it decided.
func (e *engine) sameProgram(r *pairedOutcome) bool {
	if !e.usePatch() || !e.insp.patch.identical || r != e.restoreOut || r.looks != 1 || r.d.Decision != stats.Unknown ||
		!(math.Abs(r.d.Comparison.Change) < e.opt.EffectPct/2) || !(r.d.Comparison.P >= identityCheckLevel) {
		return false
	}
	r.d.Decision = stats.Same
	r.d.Reason = fmt.Sprintf("the patched build loads the same code and data as the base build (only symbol names differ), so it is the base program; "+
		"its %d runs agree (%+.1f%%, p=%.2g): no change is left to measure", r.runs, r.d.Comparison.Change, r.d.Comparison.P)
	return true
}
