package knobs

import (
	"fmt"
	"strconv"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
)

// kernelPreset is the knobs of a Linux kernel build: KCFLAGS, which kbuild
// adds to every C compilation, and the Kconfig option
// CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B, which from Linux 6.2 on also
// aligns assembler functions (in 6.1 it only adds -falign-functions=64).
// The option can only be set in .config, so the variant names it, after
// the EXPERT it depends on, in PERFBOT_KCONFIG for the job's build command
// to apply, e.g.
//
//	for o in $PERFBOT_KCONFIG; do scripts/config -e $o; done
//	make olddefconfig && make -j2 vmlinux
//
// gcc before 14 ignores -falign-functions when it optimizes for size, so
// on a kernel built with CONFIG_CC_OPTIMIZE_FOR_SIZE (tinyconfig selects
// it) none of these knobs moves any function (docs/kernel.md).
type kernelPreset struct{}

// kernelAlignOption is the Kconfig option (without CONFIG_) that forces
// 64-byte function alignment (Linux 5.9 and later; _32B before).
const kernelAlignOption = "DEBUG_FORCE_FUNCTION_ALIGN_64B"

// kernelAlignDeps are the options kernelAlignOption depends on that a
// defconfig leaves off: without them olddefconfig drops it silently.
const kernelAlignDeps = "EXPERT"

// kernelTextAligns are the function alignments of the kernel's text
// layouts after the plain build.
var kernelTextAligns = []int{16, 32, 64}

func (kernelPreset) Name() string { return "kernel" }

func (kernelPreset) Doc() string {
	return "Linux kernel: KCFLAGS=-falign-functions=N and CONFIG_" + kernelAlignOption + " (via PERFBOT_KCONFIG); no data knob"
}

func (kernelPreset) ForcedAlignment() job.Variant {
	return job.Variant{Name: AlignName, Env: map[string]string{
		"KCFLAGS":    appendTo("KCFLAGS", "-falign-functions="+strconv.Itoa(ForcedAlign)),
		EnvKconfig:   kernelAlignDeps + " " + kernelAlignOption,
		EnvFuncAlign: strconv.Itoa(ForcedAlign),
	}}
}

// TextLayouts returns at most 4 layouts: the plain build and functions
// aligned to 16, 32 and 64 bytes. The kernel links no padding object.
func (kernelPreset) TextLayouts(n int) []job.Variant {
	return layoutsOf(min(n, 1+len(kernelTextAligns)), func(k int) string { return "falign" + strconv.Itoa(kernelTextAligns[k-1]) },
		func(k int) map[string]string {
			a := strconv.Itoa(kernelTextAligns[k-1])
			return map[string]string{"KCFLAGS": appendTo("KCFLAGS", "-falign-functions="+a), EnvFuncAlign: a}
		})
}

// DataLayouts returns nothing: the kernel has no upstream knob that moves
// its data; a padding variable in the source does (see Restore).
func (kernelPreset) DataLayouts(n int) []job.Variant { return nil }

// Layouts are the text layouts with the environment of the runs padded
// too.
func (p kernelPreset) Layouts(n int) []job.Variant {
	vs := p.TextLayouts(n)
	for k := 1; k < len(vs); k++ {
		vs[k].Name = "layout" + strconv.Itoa(k)
		vs[k].Env[EnvEnvPad] = padVars(0, 0, k*PadStep)[EnvEnvPad]
	}
	return vs
}

// Restore fails: no kernel build knob moves one symbol. The error says
// how to write the padding patch (as in the 0-day robot's reports).
func (kernelPreset) Restore(p *layout.Padding, workdir string) (job.Variant, error) {
	if err := checkPadding(p); err != nil {
		return job.Variant{}, err
	}
	return job.Variant{}, fmt.Errorf("knobs: restore %s: the kernel build has no knob that moves one symbol; patch the source instead: %s", p.Symbol, p.Instructions())
}
