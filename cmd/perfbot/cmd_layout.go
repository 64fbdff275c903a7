package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/monitor"
	"github.com/perfbot/perfbot/internal/profile"
	"github.com/perfbot/perfbot/internal/report"
)

// layoutFlags are the flags of perfbot layout diff.
type layoutFlags struct {
	profile string
	format  report.Format
	symbol  string
	pad     string
	padSet  bool
	padOut  string
	top     int
	shifts  int
	// Source patch (cmd_layout_patch.go):
	patch, patchRoot, patchCheck string
	// For two revisions of a job:
	artifact string
	variant  string
	knob     string
	storeDir string
}

// padFileName is the assembler file --pad-out writes.
const padFileName = "perfbot-pad.s"

func newLayoutCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "layout",
		Short: "explain how code and data moved between two builds",
		Long: `Layout explains how code and data moved between two builds: perfbot layout
diff A B (two binaries) or perfbot layout diff JOB REV1 REV2 (two revisions
of a job, built by perfbot). See perfbot help layout diff and docs/layout.md.

Exit status: that of the sub-command; 2 on a missing or unknown one.`,
	}
	cmd.AddCommand(newLayoutDiffCmd(a))
	needSubcommand(cmd)
	return cmd
}

func newLayoutDiffCmd(a *app) *cobra.Command {
	var f layoutFlags
	cmd := &cobra.Command{
		Use:   "diff A B | diff JOB REV1 REV2",
		Short: "say which hot functions, loops and objects changed their place in cache lines",
		Long: `Layout diff reads every function and data object of two builds A (before)
and B (after) and explains how they moved: for each symbol found in both,
its shift and its offset mod 64 (and 32, 4096) in both, the 64-byte lines it
touches, whether it newly straddles a line; the shift runs of each section
(consecutive symbols that moved by the same amount) with their cause, the
symbol added, removed or resized just before the run; the writable objects
that gained or lost a shared cache line (false-sharing candidates); and for
the top-ranked and hot functions, each loop's offset in its line, length,
and whether it crosses a line, in both builds.

A and B are ELF files (executables, PIE or not, static or dynamic, shared
libraries, objects; C, C++ or Go; not stripped) or System.map / nm listings
of kernels whose vmlinux is not at hand. With a job file and two revisions
instead, perfbot builds both (or takes them from its build cache) and diffs
the job's first artifact, or --artifact.

With --profile (perf report --stdio or perf script output, folded stacks, a
pprof profile or a callgrind.out file) changes are ranked by how hot the
function is; without one, by how much its alignment class changed.

--pad SYMBOL (or --pad '' for the top-ranked change) computes the bytes to
insert in B to give SYMBOL back its offset mod 64 from A; --pad-out DIR
writes them as a GNU assembler file (DIR/perfbot-pad.s) to link before the
program's objects, to prove that the layout change caused a slowdown.

--patch SRCDIR prints, instead of the report, a source patch for B's source
tree SRCDIR (git apply) that restores A's layout: a definition of the right
size and alignment at the root change's own spot (found from DWARF, so build
with -g), so that every address after it comes back. --patch-check BUILD
checks the build of the patched source against A.

--knob PRESET:VARIANT builds the second revision with one of the layout
knobs triage uses (docs/knobs.md), e.g. --knob c:text32 job.yaml HEAD HEAD
shows what 32 bytes of code padding moved, and says when the build log
shows that the knob's wrappers did not reach the artifact.

Exit status: 0 success, 1 the patched build does not have A's layout back
(--patch-check), 2 error.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.padSet = cmd.Flags().Changed("pad")
			if f.padOut != "" && !f.padSet {
				return fmt.Errorf("layout diff: --pad-out needs --pad SYMBOL (or --pad '' for the top-ranked change)")
			}
			if isJobFile(args[0]) {
				if len(args) != 3 {
					return fmt.Errorf("layout diff %s: need two revisions", args[0])
				}
				pathA, pathB, hot, err := buildArtifacts(cmd.Context(), a, f, args[0], args[1], args[2])
				if err != nil {
					return err
				}
				return layoutDiffFiles(a, f, pathA, pathB, hot)
			}
			if len(args) != 2 {
				return fmt.Errorf("layout diff: want two binaries, or a job file (.yaml) and two revisions")
			}
			return layoutDiffFiles(a, f, args[0], args[1], nil)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.profile, "profile", "", "profile `FILE` that says which functions are hot (perf report/script, folded, pprof, callgrind)")
	formatFlag(fl, &f.format, report.LayoutFormats)
	fl.StringVar(&f.symbol, "symbol", "", "show this `SYMBOL` first, in full, with its loops")
	fl.StringVar(&f.pad, "pad", "", "propose padding that restores `SYMBOL`'s offset mod 64 ('' for the top-ranked change)")
	fl.StringVar(&f.padOut, "pad-out", "", "write the padding as DIR/"+padFileName)
	fl.StringVar(&f.patch, "patch", "", "print a source patch for B's source tree `SRCDIR` that restores A's layout")
	fl.StringVar(&f.patchRoot, "patch-root", "", "with --patch: the root change `SYMBOL` to undo (default: found from --symbol or the top change)")
	fl.StringVar(&f.patchCheck, "patch-check", "", "with --patch: check that `BUILD`, built from the patched source, has A's layout back")
	fl.IntVar(&f.top, "top", 0, "ranked changes to print (default 10; -1 for all)")
	fl.IntVar(&f.shifts, "shifts", 0, "shift runs (symbols moved by the same amount) to print (default 8; -1 for all)")
	fl.IntVar(&f.shifts, "runs", 0, "old name of --shifts")
	_ = fl.MarkDeprecated("runs", "use --shifts (--runs is the runs of each revision elsewhere)")
	fl.StringVar(&f.artifact, "artifact", "", "with a job: the artifact to diff (default: the job's first)")
	fl.StringVar(&f.variant, "variant", "", "with a job: build both revisions with this build variant")
	fl.StringVar(&f.knob, "knob", "", "with a job: build the second revision with the layout knob `PRESET:VARIANT` (c:align64, c:text32, kernel:data16, ...) to see what it moved")
	storeFlag(fl, &f.storeDir)
	return cmd
}

// buildArtifacts builds two revisions of a job (or finds them in the build
// cache) and returns the paths of the artifact to diff in both.
func buildArtifacts(ctx context.Context, a *app, f layoutFlags, jobFile, revA, revB string) (string, string, *profile.Hotness, error) {
	jobs, err := job.Load(jobFile)
	if err != nil {
		return "", "", nil, err
	}
	j := jobs[0]
	artifact := f.artifact
	if artifact == "" {
		if len(j.Build.Artifacts) == 0 {
			return "", "", nil, fmt.Errorf("%s: build.artifacts is empty: name the binaries whose layout matters", jobFile)
		}
		artifact = j.Build.Artifacts[0]
	} else if !slices.Contains(j.Build.Artifacts, artifact) {
		return "", "", nil, fmt.Errorf("--artifact %q: not among the job's build.artifacts %v", artifact, j.Build.Artifacts)
	}
	if f.knob != "" && f.variant != "" {
		return "", "", nil, fmt.Errorf("--knob and --variant: give one (--knob builds the second revision with the knob, the first plain)")
	}
	v, ok := j.Variant(f.variant)
	if !ok {
		return "", "", nil, fmt.Errorf("--variant %q: job %s declares no such variant", f.variant, j.File)
	}
	s, err := a.open(ctx, j, f.storeDir)
	if err != nil {
		return "", "", nil, err
	}
	defer s.Close()
	commits, err := s.Resolve(ctx, []string{revA, revB})
	if err != nil {
		return "", "", nil, err
	}
	vs := []job.Variant{v, v}
	if f.knob != "" {
		if vs[1], err = knobVariant(f.knob, filepath.Join(s.Store.Dir(), "knobs")); err != nil {
			return "", "", nil, err
		}
	}
	var paths []string
	for i, c := range commits {
		res, err := s.Builder.Build(ctx, j, c, vs[i])
		if err != nil {
			return "", "", nil, err
		}
		if i == 1 && f.knob != "" {
			log, _ := os.ReadFile(res.Record.LogPath)
			if err := knobs.CheckWrapped(vs[i], log, j.Build.Artifacts); err != nil {
				fmt.Fprintf(a.stderr, "perfbot: warning: %v\n", err)
			}
			fmt.Fprintf(a.stderr, "perfbot: %s built with the knob %s (build log %s)\n", c.Short(), f.knob, res.Record.LogPath)
		}
		fmt.Fprintf(a.stderr, "perfbot: %s %s: %s\n", c.Short(), artifact, filepath.Join(res.Record.ArtifactDir, artifact))
		paths = append(paths, filepath.Join(res.Record.ArtifactDir, artifact))
	}
	// The perf profile stored with B's runs (the job's perf-profile
	// monitor) ranks the changes when no --profile is given.
	var hot *profile.Hotness
	if f.profile == "" {
		if h, n, err := monitor.CommitProfile(ctx, s.Store, j.Key(), commits[1].Hash, measure.VariantID(vs[1])); err == nil && n > 0 {
			hot = h
			fmt.Fprintf(a.stderr, "perfbot: ranking by the perf profile stored with %d runs of %s\n", n, commits[1].Short())
		}
	}
	return paths[0], paths[1], hot, nil
}

// knobVariant returns the layout knob named "PRESET:VARIANT", its files
// written under dir (the store's knobs folder, as triage does).
func knobVariant(knob, dir string) (job.Variant, error) {
	preset, name, ok := strings.Cut(knob, ":")
	if !ok || name == "" {
		return job.Variant{}, fmt.Errorf("--knob %q: want PRESET:VARIANT, e.g. c:text32 or c:align64", knob)
	}
	p, err := knobs.LookupIn(preset, dir)
	if err != nil {
		return job.Variant{}, fmt.Errorf("--knob: %w", err)
	}
	v, ok := knobs.Find(p, name)
	if !ok {
		return job.Variant{}, fmt.Errorf("--knob %q: the %s preset has no variant %q (%s, text16..., data16..., layout1...)", knob, p.Name(), name, knobs.AlignName)
	}
	return v, nil
}

// layoutDiffFiles diffs the layouts of two build outputs and writes the
// report; stored, when not nil, is the profile stored with B's runs. It is the seam for diffing two revisions of a job: build both,
// then call it with the two binaries.
func layoutDiffFiles(a *app, f layoutFlags, pathA, pathB string, stored *profile.Hotness) error {
	if f.patch == "" && (f.patchRoot != "" || f.patchCheck != "") {
		return fmt.Errorf("layout diff: --patch-root and --patch-check need --patch SRCDIR")
	}
	opt := layout.DiffOptions{Hot: stored}
	if f.profile != "" {
		h, err := profile.Read(f.profile)
		if err != nil {
			return fmt.Errorf("layout diff: %w", err)
		}
		opt.Hot = h
	}
	if f.symbol != "" {
		opt.Symbols = append(opt.Symbols, f.symbol)
	}
	if f.padSet && f.pad != "" {
		opt.Symbols = append(opt.Symbols, f.pad)
	}
	ba, err := layout.Open(pathA)
	if err != nil {
		return fmt.Errorf("layout diff: reading A: %w", err)
	}
	bb, err := layout.Open(pathB)
	if err != nil {
		return fmt.Errorf("layout diff: reading B: %w", err)
	}
	d := layout.Diff(ba, bb, opt)
	if f.patch != "" {
		return layoutSourcePatch(a, f, ba, bb, d)
	}

	ropt := report.LayoutOptions{Top: f.top, Runs: f.shifts, Symbol: f.symbol}
	if f.padSet {
		p, err := layout.ProposePadding(d, f.pad)
		if err != nil {
			return fmt.Errorf("layout diff: --pad: %w", err)
		}
		ropt.Padding = p
		if f.padOut != "" {
			if err := os.MkdirAll(f.padOut, 0o755); err != nil {
				return fmt.Errorf("layout diff: --pad-out: %w", err)
			}
			out := filepath.Join(f.padOut, padFileName)
			if err := os.WriteFile(out, []byte(p.Asm()), 0o644); err != nil {
				return fmt.Errorf("layout diff: --pad-out: %w", err)
			}
			fmt.Fprintf(a.stderr, "perfbot: wrote %s (%d bytes into %s before %s)\n", out, p.Bytes, p.Section, p.Before.Name)
		}
	}
	if f.format == "json" {
		return report.WriteLayoutJSON(a.stdout, d, ropt)
	}
	return report.WriteLayoutText(a.stdout, d, ropt)
}
