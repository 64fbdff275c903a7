// Package knobs turns the layout knobs of each toolchain into build
// variants: forced function and loop alignment, padding laid out before the
// code or the data, link-order shuffles and the size of the environment
// (which moves the stack). perfbot triage and bisect rebuild commits under
// these variants to tell a real performance change from an alignment
// artifact.
//
// A [Preset] knows the knobs of one toolchain; [Lookup] returns it by name:
//
//   - "c" (also "gcc", "clang"): a folder of compiler wrappers first on
//     PATH (wrap.go) that add -falign-functions=64 -falign-loops=64 to
//     every compile and link, and put a padding assembler file first on
//     the link line of each of the job's artifacts, so that builds which
//     honour neither CFLAGS nor EXTRA_OBJS take the knobs;
//   - "go": GOFLAGS with -ldflags=-funcalign=64 or -ldflags=-randlayout=SEED,
//     and a padding file added to the package built in the build directory
//     through -overlay;
//   - "rust": RUSTFLAGS with LLVM's -align-all-functions and -align-loops,
//     lld's --shuffle-sections, and a padding object ordered first with
//     lld's --symbol-ordering-file;
//   - "kernel": KCFLAGS=-falign-functions=64 and the Kconfig option
//     CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B (named in PERFBOT_KCONFIG for
//     the build command to apply); padding linked first into vmlinux by an
//     ld wrapper first on PATH;
//   - "env": only the PERFBOT_* variables below, for any other build to map
//     to its own flags.
//
// Every variant of every preset also sets the PERFBOT_* variables that
// describe it, so a build command can read them whatever the preset. The
// variables reach the benchmark runs too (a variant's environment is the
// build's and the runs'), and PERFBOT_ENV_PAD, whose value is filler,
// moves the initial stack by its length.
//
// The first layout of TextLayouts, DataLayouts and Layouts is always the
// plain build (the zero [job.Variant]), so that it shares its build and
// runs with plain comparisons. docs/knobs.md documents every knob and
// variable.
package knobs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
)

// The variables that describe a layout variant. Unset means the default
// (no padding, the toolchain's own alignment, no shuffle).
const (
	// EnvFuncAlign is the forced alignment of functions and loops in bytes
	// ("64").
	EnvFuncAlign = "PERFBOT_FUNC_ALIGN"
	// EnvTextPad is the number of bytes of code to lay out before the
	// program's own code.
	EnvTextPad = "PERFBOT_TEXT_PAD"
	// EnvDataPad is the number of bytes to lay out before the program's
	// own zeroed data (.bss) and constants (.rodata).
	EnvDataPad = "PERFBOT_DATA_PAD"
	// EnvLayoutSeed is a seed for a link-order shuffle (1, 2, ...).
	EnvLayoutSeed = "PERFBOT_LAYOUT_SEED"
	// EnvEnvPad is filler whose length moves the initial stack of every
	// run; its value is only "x" repeated.
	EnvEnvPad = "PERFBOT_ENV_PAD"
	// EnvPadAsm is the path of a GNU assembler file that holds a padding
	// (restore variants, and the layouts of the c preset).
	EnvPadAsm = "PERFBOT_PAD_ASM"
	// EnvPadSymbol and EnvPadSection name the symbol whose offset a restore
	// variant gives back, and the section padded.
	EnvPadSymbol  = "PERFBOT_PAD_SYMBOL"
	EnvPadSection = "PERFBOT_PAD_SECTION"
	// EnvKconfig lists kernel config options to enable, separated by
	// spaces, without the CONFIG_ prefix (kernel preset).
	EnvKconfig = "PERFBOT_KCONFIG"
	// EnvDebugInfo is "1" in a build that adds debug information (-g)
	// and nothing else (DebugInfo).
	EnvDebugInfo = "PERFBOT_DEBUG_INFO"
)

// ForcedAlign is the alignment, in bytes, of the ForcedAlignment variants:
// a cache line, as in the 0-day robot's rebuilds.
const ForcedAlign = 64

// PadStep is the padding step between two layouts, in bytes: compilers
// align functions and data sections to 16 bytes, so smaller steps would be
// absorbed by that alignment.
const PadStep = 16

// MaxLayouts is the most layouts TextLayouts, DataLayouts and Layouts
// return.
const MaxLayouts = 16

// Variant names shared by the presets.
const (
	// AlignName is the name of every preset's ForcedAlignment variant.
	AlignName = "align64"
	// RestoreName is the name of every preset's Restore variant.
	RestoreName = "restore"
	// DebugName is the name of the DebugInfo variant.
	DebugName = "debug"
)

// Preset is the set of layout knobs of one toolchain, as build variants.
type Preset interface {
	// Name is the preset's name ("c", "go", "rust", "kernel", "env").
	Name() string
	// Doc says in one line which knobs the preset uses.
	Doc() string
	// ForcedAlignment rebuilds with every function and loop aligned to
	// ForcedAlign bytes (the 0-day robot's -falign-functions rebuild).
	ForcedAlignment() job.Variant
	// TextLayouts returns up to n layouts that move the code only; the
	// first is the plain build. Fewer (or none) when the toolchain has no
	// such knob.
	TextLayouts(n int) []job.Variant
	// DataLayouts returns up to n layouts that move the data only; the
	// first is the plain build. Fewer (or none) when the toolchain has no
	// such knob.
	DataLayouts(n int) []job.Variant
	// Layouts returns up to n layouts that move code, data and stack
	// together, for estimating a change with layouts as a random factor;
	// the first is the plain build.
	Layouts(n int) []job.Variant
	// Restore returns a variant that inserts padding p (from
	// layout.ProposePadding), so that the padded build gets back the old
	// offset of p.Symbol. Files it needs are written under workdir.
	Restore(p *layout.Padding, workdir string) (job.Variant, error)
}

// DebugInfo is a preset that can rebuild a commit with debug information
// without changing its code generation: the c preset's wrappers add -g to
// every compile and link (gcc and clang keep code generation independent
// of -g). Triage reads that build's DWARF to place a source patch
// (layout.SourcePatch) and checks that its layout is the plain build's.
type DebugInfo interface {
	// DebugInfo returns the variant, named DebugName.
	DebugInfo() job.Variant
}

// Names lists the preset names Lookup knows, aliases last.
func Names() []string {
	return []string{"c", "go", "rust", "kernel", "env", "gcc", "clang"}
}

// DefaultDir is where Lookup writes the files its variants refer to:
// $PERFBOT_KNOBS_DIR, else perfbot/knobs in the user's cache folder.
func DefaultDir() string {
	if d := os.Getenv("PERFBOT_KNOBS_DIR"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "perfbot", "knobs")
	}
	return filepath.Join(os.TempDir(), "perfbot-knobs")
}

// Lookup returns the preset called name, writing the files its variants
// refer to (padding objects of the c preset) under DefaultDir.
func Lookup(name string) (Preset, error) {
	return LookupIn(name, DefaultDir())
}

// LookupIn returns the preset called name, writing the files its variants
// refer to under dir (perfbot triage uses a folder of its results store).
// The files are named by content, so the same variant always refers to the
// same path and its builds stay cached.
func LookupIn(name, dir string) (Preset, error) {
	switch name {
	case "c", "gcc", "clang":
		return newC(dir)
	case "go":
		return goPreset{}, nil
	case "rust":
		return rustPreset{}, nil
	case "kernel":
		return newKernel(dir)
	case "env":
		return envPreset{}, nil
	case "":
		return nil, fmt.Errorf("knobs: empty preset name (want one of %s)", strings.Join(Names(), ", "))
	}
	return nil, fmt.Errorf("knobs: unknown preset %q (want one of %s)", name, strings.Join(Names(), ", "))
}

// EnvPadding returns a variant whose only effect is an environment larger
// by about bytes (PERFBOT_ENV_PAD), which moves the initial stack of every
// run. Its builds are the plain builds' (the variable changes no build
// flag), but they are cached under their own key.
func EnvPadding(bytes int) job.Variant {
	if bytes <= 0 {
		return job.Variant{}
	}
	return job.Variant{Name: "env" + strconv.Itoa(bytes), Env: map[string]string{EnvEnvPad: strings.Repeat("x", bytes)}}
}

// StackLayouts returns up to n environment-size layouts (0, 16, 32, ...
// bytes of PERFBOT_ENV_PAD): the run-time knob of Mytkowicz et al. (ASPLOS
// 2009), usable with any preset. The first is the plain build.
func StackLayouts(n int) []job.Variant {
	n = clampLayouts(n)
	out := make([]job.Variant, 0, n)
	for k := range n {
		out = append(out, EnvPadding(k*PadStep))
	}
	return out
}

// clampLayouts limits n to [0, MaxLayouts].
func clampLayouts(n int) int {
	return max(0, min(n, MaxLayouts))
}

// layoutsOf makes n variants, the first the plain build, the k-th (k >= 1)
// named name(k) with the environment env(k).
func layoutsOf(n int, name func(k int) string, env func(k int) map[string]string) []job.Variant {
	n = clampLayouts(n)
	if n == 0 {
		return nil
	}
	out := []job.Variant{{}}
	for k := 1; k < n; k++ {
		out = append(out, job.Variant{Name: name(k), Env: env(k)})
	}
	return out
}

// prepend returns the value "words ${NAME}": words placed before whatever
// the build's own environment holds in NAME.
func prepend(name string, words ...string) string {
	return strings.Join(words, " ") + " ${" + name + "}"
}

// appendTo returns "${NAME} words": words after the build's own NAME.
func appendTo(name string, words ...string) string {
	return "${" + name + "} " + strings.Join(words, " ")
}

// padVars are the PERFBOT_* variables of a layout that pads text and data
// by the given bytes and the environment by env bytes.
func padVars(text, data, env int) map[string]string {
	m := map[string]string{}
	if text > 0 {
		m[EnvTextPad] = strconv.Itoa(text)
	}
	if data > 0 {
		m[EnvDataPad] = strconv.Itoa(data)
	}
	if env > 0 {
		m[EnvEnvPad] = strings.Repeat("x", env)
	}
	return m
}

// restoreVars are the PERFBOT_* variables of a restore variant.
func restoreVars(p *layout.Padding, asm string) map[string]string {
	m := map[string]string{EnvPadSymbol: p.Symbol, EnvPadSection: p.Section}
	if asm != "" {
		m[EnvPadAsm] = asm
	}
	if p.Kind == layout.Func {
		m[EnvTextPad] = strconv.FormatUint(p.Bytes, 10)
	} else {
		m[EnvDataPad] = strconv.FormatUint(p.Bytes, 10)
	}
	return m
}

// checkPadding rejects paddings Restore cannot apply.
func checkPadding(p *layout.Padding) error {
	switch {
	case p == nil:
		return fmt.Errorf("knobs: restore: no padding given")
	case p.Bytes == 0 || p.Bytes >= layout.LineSize:
		return fmt.Errorf("knobs: restore %s: padding of %d bytes; want 1 to %d", p.Symbol, p.Bytes, layout.LineSize-1)
	}
	return nil
}

// writeOnce writes content to dir/name-<hash>.ext unless a file with that
// content is already there, and returns the path. The name holds a hash of
// the content, so a path always means the same bytes.
func writeOnce(dir, name, ext, content string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("knobs: no folder to write %s%s into", name, ext)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("knobs: %v", err)
	}
	sum := sha256.Sum256([]byte(content))
	path := filepath.Join(abs, name+"-"+hex.EncodeToString(sum[:4])+ext)
	if old, err := os.ReadFile(path); err == nil && string(old) == content {
		return path, nil
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("knobs: %v", err)
	}
	tmp, err := os.CreateTemp(abs, ".tmp-"+name+"-*")
	if err != nil {
		return "", fmt.Errorf("knobs: %v", err)
	}
	_, werr := tmp.WriteString(content)
	cerr := tmp.Close()
	if err := firstErr(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("knobs: writing %s: %v", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("knobs: writing %s: %v", path, err)
	}
	return path, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// noSpaces rejects paths that cannot go into space-separated flag lists
// (GOFLAGS, RUSTFLAGS).
func noSpaces(what, path string) error {
	if strings.ContainsAny(path, " \t\n") {
		return fmt.Errorf("knobs: %s path %q holds white space, which %s cannot carry; use a knobs folder without spaces", what, path, what)
	}
	return nil
}

// Find returns the variant of preset p called name: AlignName, or one of
// its text, data or joint layouts (text16, data32, layout2, ...); ok is
// false when p has none of that name. "" is the plain build.
func Find(p Preset, name string) (v job.Variant, ok bool) {
	if name == "" {
		return job.Variant{}, true
	}
	all := []job.Variant{p.ForcedAlignment()}
	all = append(all, p.TextLayouts(MaxLayouts)...)
	all = append(all, p.DataLayouts(MaxLayouts)...)
	all = append(all, p.Layouts(MaxLayouts)...)
	for _, v := range all {
		if v.Name == name {
			return v, true
		}
	}
	return job.Variant{}, false
}
