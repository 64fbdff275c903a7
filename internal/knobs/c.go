package knobs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
)

// alignFlags are the compiler flags of the forced-alignment rebuild of C
// and C++: functions and loops start on a cache line, so that a commit
// that only shifts code cannot change where a hot loop sits in its line.
const alignFlags = "-falign-functions=64 -falign-loops=64"

// cPreset is the knobs of gcc and clang builds. Padding is a GNU assembler
// file that the build links before its own objects: the C compiler driver
// assembles a .s file given at link time, so EXTRA_OBJS=pad.s works with
// both gcc and clang.
type cPreset struct {
	dir string
	// text[k], data[k] and both[k] are the padding files of layout k
	// (k >= 1): 16k bytes of code, of data, or of both.
	text, data, both []string
}

func newC(dir string) (*cPreset, error) {
	p := &cPreset{dir: dir, text: make([]string, MaxLayouts), data: make([]string, MaxLayouts), both: make([]string, MaxLayouts)}
	for k := 1; k < MaxLayouts; k++ {
		n := k * PadStep
		var err error
		if p.text[k], err = writeOnce(dir, fmt.Sprintf("text-pad-%d", n), ".s", padAsm(n, 0)); err != nil {
			return nil, err
		}
		if p.data[k], err = writeOnce(dir, fmt.Sprintf("data-pad-%d", n), ".s", padAsm(0, n)); err != nil {
			return nil, err
		}
		if p.both[k], err = writeOnce(dir, fmt.Sprintf("layout-pad-%d", n), ".s", padAsm(n, n)); err != nil {
			return nil, err
		}
		for _, f := range []string{p.text[k], p.data[k], p.both[k]} {
			if err := noSpaces("EXTRA_OBJS", f); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

func (p *cPreset) Name() string { return "c" }

func (p *cPreset) Doc() string {
	return "gcc/clang: CFLAGS/CXXFLAGS " + alignFlags + "; padding .s files linked first via EXTRA_OBJS"
}

func (p *cPreset) ForcedAlignment() job.Variant {
	return job.Variant{Name: AlignName, Env: map[string]string{
		"CFLAGS":     appendTo("CFLAGS", alignFlags),
		"CXXFLAGS":   appendTo("CXXFLAGS", alignFlags),
		EnvFuncAlign: strconv.Itoa(ForcedAlign),
	}}
}

func (p *cPreset) TextLayouts(n int) []job.Variant {
	return layoutsOf(n, func(k int) string { return "text" + strconv.Itoa(k*PadStep) },
		func(k int) map[string]string {
			m := padVars(k*PadStep, 0, 0)
			m["EXTRA_OBJS"] = prepend("EXTRA_OBJS", p.text[k])
			m[EnvPadAsm] = p.text[k]
			return m
		})
}

func (p *cPreset) DataLayouts(n int) []job.Variant {
	return layoutsOf(n, func(k int) string { return "data" + strconv.Itoa(k*PadStep) },
		func(k int) map[string]string {
			m := padVars(0, k*PadStep, 0)
			m["EXTRA_OBJS"] = prepend("EXTRA_OBJS", p.data[k])
			m[EnvPadAsm] = p.data[k]
			return m
		})
}

func (p *cPreset) Layouts(n int) []job.Variant {
	return layoutsOf(n, func(k int) string { return "layout" + strconv.Itoa(k) },
		func(k int) map[string]string {
			m := padVars(k*PadStep, k*PadStep, k*PadStep)
			m["EXTRA_OBJS"] = prepend("EXTRA_OBJS", p.both[k])
			m[EnvPadAsm] = p.both[k]
			return m
		})
}

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
	if err := noSpaces("EXTRA_OBJS", path); err != nil {
		return job.Variant{}, err
	}
	env := restoreVars(pad, path)
	env["EXTRA_OBJS"] = prepend("EXTRA_OBJS", path)
	return job.Variant{Name: RestoreName, Env: env}, nil
}

// padAsm returns a GNU assembler file that lays out text bytes of code
// and data bytes of data before the program's own, when it is linked
// first. The code padding (int3) goes into .text.unlikely, which GNU ld
// places first in the output .text, so that it moves every function of
// the program (main in .text.startup included). The data padding goes into
// .bss (zeroed data) and .rodata (constants), not into .data: .bss follows
// .data, so padding .data too would move .bss twice, and a .data padding
// alone moves .bss only up to the alignment of its largest object. Every
// piece is 16-byte aligned and a multiple of 16 bytes long, so what follows
// it moves by that many bytes (objects aligned to more than 16 bytes may
// move a little more or less).
func padAsm(text, data int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# perfbot layout padding: %d bytes before the code, %d bytes before the zeroed data (.bss) and the constants (.rodata).\n", text, data)
	b.WriteString("# Link it before the program's own objects (EXTRA_OBJS) to move them.\n")
	section := func(name, label, flags, kind string, n int, fill string) {
		label = fmt.Sprintf("perfbot_pad_%s_%d", label, n)
		fmt.Fprintf(&b, "\t.section %s,%q,@progbits\n\t.balign 16\n\t.globl %s\n\t.type %s, %s\n\t.size %s, %d\n%s:\n\t.skip %d%s\n",
			name, flags, label, label, kind, label, n, label, n, fill)
	}
	if text > 0 {
		section(".text.unlikely", "text", "ax", "@function", text, ", 0xcc")
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
