package knobs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
)

// rustPreset is the knobs of rustc, passed through RUSTFLAGS (which cargo
// honours, and which replaces build.rustflags of .cargo/config). rustc
// puts each function and object in its own section, and links with lld
// (the default on x86_64-unknown-linux-gnu since Rust 1.90), whose
// --shuffle-sections reorders them. lld lays the segments out one after
// the other, so a text layout also moves the data that follows the code by
// the change in code size, and a data layout the code that follows
// .rodata; each layout still varies what it names.
type rustPreset struct{}

// rustAlign are the LLVM options of the forced-alignment rebuild:
// functions aligned to 2^6 bytes and loops to 64.
const rustAlign = "-C llvm-args=-align-all-functions=6 -C llvm-args=-align-loops=64"

func (rustPreset) Name() string { return "rust" }

func (rustPreset) Doc() string {
	return "Rust: RUSTFLAGS " + rustAlign + "; lld --shuffle-sections for text and data layouts"
}

func (rustPreset) ForcedAlignment() job.Variant {
	return job.Variant{Name: AlignName, Env: map[string]string{
		"RUSTFLAGS":  appendTo("RUSTFLAGS", rustAlign),
		EnvFuncAlign: strconv.Itoa(ForcedAlign),
	}}
}

// shuffle returns the linker arguments that shuffle the input sections
// matching each glob with seed.
func shuffle(seed int, globs ...string) string {
	var parts []string
	for _, g := range globs {
		parts = append(parts, "-C link-arg=-Wl,--shuffle-sections="+g+"="+strconv.Itoa(seed))
	}
	return strings.Join(parts, " ")
}

var (
	rustTextGlobs = []string{".text*"}
	rustDataGlobs = []string{".data*", ".bss*", ".rodata*"}
)

func (rustPreset) TextLayouts(n int) []job.Variant {
	return layoutsOf(n, func(k int) string { return "shuffle-text" + strconv.Itoa(k) },
		func(k int) map[string]string {
			return map[string]string{"RUSTFLAGS": appendTo("RUSTFLAGS", shuffle(k, rustTextGlobs...)), EnvLayoutSeed: strconv.Itoa(k)}
		})
}

func (rustPreset) DataLayouts(n int) []job.Variant {
	return layoutsOf(n, func(k int) string { return "shuffle-data" + strconv.Itoa(k) },
		func(k int) map[string]string {
			return map[string]string{"RUSTFLAGS": appendTo("RUSTFLAGS", shuffle(k, rustDataGlobs...)), EnvLayoutSeed: strconv.Itoa(k)}
		})
}

func (rustPreset) Layouts(n int) []job.Variant {
	return layoutsOf(n, func(k int) string { return "layout" + strconv.Itoa(k) },
		func(k int) map[string]string {
			m := padVars(0, 0, k*PadStep)
			m["RUSTFLAGS"] = appendTo("RUSTFLAGS", shuffle(k, append(append([]string{}, rustTextGlobs...), rustDataGlobs...)...))
			m[EnvLayoutSeed] = strconv.Itoa(k)
			return m
		})
}

// Restore links the padding's assembler file, keeps it from lld's garbage
// collection (--undefined) and orders its section first in its output
// section (--symbol-ordering-file).
func (rustPreset) Restore(p *layout.Padding, workdir string) (job.Variant, error) {
	if err := checkPadding(p); err != nil {
		return job.Variant{}, err
	}
	asm, err := writeOnce(workdir, "restore-"+fileSafe(p.Symbol), ".s", p.Asm())
	if err != nil {
		return job.Variant{}, err
	}
	order, err := writeOnce(workdir, "restore-order-"+fileSafe(p.Symbol), ".txt", p.Label()+"\n")
	if err != nil {
		return job.Variant{}, err
	}
	for _, f := range []string{asm, order} {
		if err := noSpaces("RUSTFLAGS", f); err != nil {
			return job.Variant{}, err
		}
	}
	env := restoreVars(p, asm)
	env["RUSTFLAGS"] = appendTo("RUSTFLAGS", fmt.Sprintf("-C link-arg=%s -C link-arg=-Wl,--undefined=%s -C link-arg=-Wl,--symbol-ordering-file=%s", asm, p.Label(), order))
	return job.Variant{Name: RestoreName, Env: env}, nil
}
