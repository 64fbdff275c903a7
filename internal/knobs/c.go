package knobs

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
)

// alignFlags are the compiler flags of the forced-alignment rebuild of C
// and C++: functions and loops start on a cache line, so that a commit
// that only shifts code cannot change where a hot loop sits in its line.
const alignFlags = "-falign-functions=64 -falign-loops=64"

// cPreset is the knobs of gcc and clang builds. Every variant but the
// plain build puts a wrapper folder first on PATH (wrap.go): compiler
// drivers that add the forced-alignment flags to every compile and link,
// and put the variant's padding, a GNU assembler file, first on the link
// command line of each of the job's artifacts (the C compiler driver
// assembles a .s file given at link time, with gcc and clang alike). So
// any build that calls the compiler by name takes the knobs, whatever its
// own CFLAGS and link lines. Nothing goes into CFLAGS, CXXFLAGS or
// EXTRA_OBJS: a CFLAGS in the environment replaces the defaults of
// Makefiles that say "CFLAGS ?= -O3" (zstd, xxHash, lz4), so the
// forced-alignment build would not be optimized; and a padding in
// EXTRA_OBJS as well as on the wrapper's link line would be linked twice.
type cPreset struct {
	dir   string
	tools []string // compiler names on PATH, wrapped
	align string   // wrapper folder of the forced-alignment variant
	debug string   // wrapper folder of the debug-information variant
	pads  paddedLayouts
}

func newC(dir string) (*cPreset, error) {
	p := &cPreset{dir: dir}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("knobs: %v", err)
	}
	p.tools = findTools(ccNames, abs)
	if p.align, err = writeWrapDir(dir, wrapSpec{variant: AlignName, mode: wrapCC, flags: alignFlags}, p.tools); err != nil {
		return nil, err
	}
	if p.debug, err = writeWrapDir(dir, wrapSpec{variant: DebugName, mode: wrapCC, flags: debugFlags}, p.tools); err != nil {
		return nil, err
	}
	if p.pads, err = newPaddedLayouts(dir, "", textPadSection, wrapSpec{mode: wrapCC}, p.tools); err != nil {
		return nil, err
	}
	return p, nil
}

// debugFlags are the flags of the debug-information rebuild: DWARF, and
// nothing that changes the code.
const debugFlags = "-g"

// DebugInfo is the build with -g added to every compile and link by the
// wrappers, for the DWARF a source patch needs (knobs.DebugInfo).
func (p *cPreset) DebugInfo() job.Variant {
	return job.Variant{Name: DebugName, Env: wrapEnv(map[string]string{EnvDebugInfo: "1"}, p.debug)}
}

func (p *cPreset) Name() string { return "c" }

func (p *cPreset) Doc() string {
	return "gcc/clang: compiler wrappers first on PATH add " + alignFlags + " and link padding .s files first into the job's artifacts"
}

func (p *cPreset) ForcedAlignment() job.Variant {
	return job.Variant{Name: AlignName, Env: wrapEnv(map[string]string{
		EnvFuncAlign: strconv.Itoa(ForcedAlign),
	}, p.align)}
}

func (p *cPreset) TextLayouts(n int) []job.Variant { return p.pads.variants(padText, n) }

func (p *cPreset) DataLayouts(n int) []job.Variant { return p.pads.variants(padData, n) }

func (p *cPreset) Layouts(n int) []job.Variant { return p.pads.variants(padBoth, n) }

func (p *cPreset) Restore(pad *layout.Padding, workdir string) (job.Variant, error) {
	if err := checkPadding(pad); err != nil {
		return job.Variant{}, err
	}
	if pad.Go {
		return job.Variant{}, fmt.Errorf("knobs: restore %s: the binary was built by Go, whose linker takes no assembler objects; use the go preset", pad.Symbol)
	}
	path, err := writeOnce(workdir, "restore-"+fileSafe(pad.Symbol), ".s", pad.Asm())
	if err != nil {
		return job.Variant{}, err
	}
	wdir, err := writeWrapDir(workdir, wrapSpec{variant: RestoreName + " " + pad.Symbol, mode: wrapCC, pad: path}, p.tools)
	if err != nil {
		return job.Variant{}, err
	}
	return job.Variant{Name: RestoreName, Env: wrapEnv(restoreVars(pad, path), wdir)}, nil
}

// textPadSection is where the c preset's code padding goes: GNU ld's
// default linker script places .text.unlikely first in the output .text,
// so the padding moves every function of the program (main in
// .text.startup included).
const textPadSection = ".text.unlikely"

// padAsm returns a GNU assembler file that lays out text bytes of code
// and data bytes of data before the program's own, when it is linked
// first. The code padding (int3) goes into textSection: .text.unlikely
// for programs (textPadSection), .text for the kernel, whose linker
// script places .text.unlikely after .text. The data padding goes into
// .bss (zeroed data) and .rodata (constants), not into .data: .bss follows
// .data, so padding .data too would move .bss twice, and a .data padding
// alone moves .bss only up to the alignment of its largest object. Every
// piece is 16-byte aligned and a multiple of 16 bytes long, so what follows
// it moves by that many bytes (objects aligned to more than 16 bytes may
// move a little more or less).
func padAsm(text, data int, textSection string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# perfbot layout padding: %d bytes before the code, %d bytes before the zeroed data (.bss) and the constants (.rodata).\n", text, data)
	b.WriteString("# perfbot's wrappers link it before the program's own objects, to move them.\n")
	section := func(name, label, flags, kind string, n int, fill string) {
		label = fmt.Sprintf("perfbot_pad_%s_%d", label, n)
		fmt.Fprintf(&b, "\t.section %s,%q,@progbits\n\t.balign 16\n\t.globl %s\n\t.type %s, %s\n\t.size %s, %d\n%s:\n\t.skip %d%s\n",
			name, flags, label, label, kind, label, n, label, n, fill)
	}
	if text > 0 {
		section(textSection, "text", "ax", "@function", text, ", 0xcc")
	}
	if data > 0 {
		fmt.Fprintf(&b, "\t.section .bss,\"aw\",@nobits\n\t.balign 16\n\t.globl perfbot_pad_bss_%d\n\t.type perfbot_pad_bss_%d, @object\n\t.size perfbot_pad_bss_%d, %d\nperfbot_pad_bss_%d:\n\t.skip %d\n", data, data, data, data, data, data)
		section(".rodata", "rodata", "a", "@object", data, "")
	}
	b.WriteString("\t.section .note.GNU-stack,\"\",@progbits\n")
	return b.String()
}

// fileSafe turns a symbol name into a file name part.
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	if len(out) > 40 {
		out = out[:40]
	}
	return out
}
