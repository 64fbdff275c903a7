package knobs

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
)

// kernelPreset is the knobs of a Linux kernel build. Forced alignment is
// KCFLAGS, which kbuild adds to every C compilation, and the Kconfig
// option CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B, which from Linux 6.2 on
// also aligns assembler functions (in 6.1 it only adds
// -falign-functions=64). The option can only be set in .config, so the
// variant names it, after the EXPERT it depends on, in PERFBOT_KCONFIG for
// the job's build command to apply, e.g.
//
//	for o in $PERFBOT_KCONFIG; do scripts/config -e $o; done
//	make olddefconfig && make -j2 vmlinux
//
// gcc before 14 ignores -falign-functions when it optimizes for size, so
// on a kernel built with CONFIG_CC_OPTIMIZE_FOR_SIZE (tinyconfig selects
// it) forced alignment moves no function (docs/kernel.md).
//
// The layouts and the restore pad the vmlinux link: Kbuild calls $(LD)
// (ld) itself, so an ld wrapper first on PATH (wrap.go) assembles the
// padding and puts it first on the command line of every link of an
// artifact (vmlinux) and of the intermediate .tmp_vmlinux* links, whose
// kallsyms must match the final link's layout. Partial links (ld -r:
// vmlinux.o, built-in objects, modules), the vDSO (-shared) and the boot
// decompressor's own vmlinux (another path) are not padded. The code
// padding goes into .text, which the kernel's linker script places first
// after .head.text (it places .text.unlikely after .text).
type kernelPreset struct {
	dir   string
	tools []string // linker names on PATH, wrapped
	pads  paddedLayouts
}

// kernelAlignOption is the Kconfig option (without CONFIG_) that forces
// 64-byte function alignment (Linux 5.9 and later; _32B before).
const kernelAlignOption = "DEBUG_FORCE_FUNCTION_ALIGN_64B"

// kernelAlignDeps are the options kernelAlignOption depends on that a
// defconfig leaves off: without them olddefconfig drops it silently.
const kernelAlignDeps = "EXPERT"

// kernelLinks are the link outputs the ld wrapper pads besides the
// artifacts: link-vmlinux.sh's intermediate links (.tmp_vmlinux.kallsyms1,
// 2, 3 and .tmp_vmlinux.btf in 6.1; .tmp_vmlinux1, 2 later), whose
// System.map must equal the final one.
var kernelLinks = []string{"*/.tmp_vmlinux*"}

// kernelTextSection is where the kernel's code padding goes (see
// kernelPreset).
const kernelTextSection = ".text"

func newKernel(dir string) (*kernelPreset, error) {
	p := &kernelPreset{dir: dir}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("knobs: %v", err)
	}
	p.tools = findTools(ldNames, abs)
	if p.pads, err = newPaddedLayouts(dir, "kernel-", kernelTextSection, wrapSpec{mode: wrapLD, links: kernelLinks}, p.tools); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *kernelPreset) Name() string { return "kernel" }

func (p *kernelPreset) Doc() string {
	return "Linux kernel: KCFLAGS=-falign-functions=64 and CONFIG_" + kernelAlignOption + " (via PERFBOT_KCONFIG); padding linked first into vmlinux by an ld wrapper first on PATH"
}

func (p *kernelPreset) ForcedAlignment() job.Variant {
	return job.Variant{Name: AlignName, Env: map[string]string{
		"KCFLAGS":    appendTo("KCFLAGS", "-falign-functions="+strconv.Itoa(ForcedAlign)),
		EnvKconfig:   kernelAlignDeps + " " + kernelAlignOption,
		EnvFuncAlign: strconv.Itoa(ForcedAlign),
	}}
}

// TextLayouts move the kernel's .text by 16k bytes (layout k).
func (p *kernelPreset) TextLayouts(n int) []job.Variant { return p.pads.variants(padText, n) }

// DataLayouts move the kernel's .bss and .rodata by 16k bytes (layout k).
func (p *kernelPreset) DataLayouts(n int) []job.Variant { return p.pads.variants(padData, n) }

// Layouts move code and data together, and the runs' environment.
func (p *kernelPreset) Layouts(n int) []job.Variant { return p.pads.variants(padBoth, n) }

// Restore links the padding first into vmlinux through the ld wrapper:
// every symbol of the padded section moves by its size, so the one named
// gets back its old offset (what the seed's debug patch did by adding a
// static key, but for the whole section at once).
func (p *kernelPreset) Restore(pad *layout.Padding, workdir string) (job.Variant, error) {
	if err := checkPadding(pad); err != nil {
		return job.Variant{}, err
	}
	if pad.Go {
		return job.Variant{}, fmt.Errorf("knobs: restore %s: the binary was built by Go; use the go preset", pad.Symbol)
	}
	path, err := writeOnce(workdir, "restore-"+fileSafe(pad.Symbol), ".s", pad.Asm())
	if err != nil {
		return job.Variant{}, err
	}
	wdir, err := writeWrapDir(workdir, wrapSpec{variant: RestoreName + " " + pad.Symbol, mode: wrapLD, pad: path, links: kernelLinks}, p.tools)
	if err != nil {
		return job.Variant{}, fmt.Errorf("%w; or patch the source: %s", err, pad.Instructions())
	}
	return job.Variant{Name: RestoreName, Env: wrapEnv(restoreVars(pad, path), wdir)}, nil
}
