package knobs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/testutil"
)

// kbuildFiles is a Kbuild-like build: C compiled by gcc with $(KCFLAGS),
// a partial link (ld -r) of the objects into built-in.o, link-vmlinux.sh's
// intermediate link .tmp_vmlinux.kallsyms1 and the final vmlinux, both by
// $(LD) with a kernel-like linker script (sections on their own pages), a vDSO-like shared object, the
// boot decompressor's own vmlinux in another folder, and a host program
// linked by gcc (whose collect2 finds ld on PATH: the wrapper's too).
var kbuildFiles = map[string]string{
	"kern.c":   cProgram["kern.c"],
	"start.c":  "unsigned long kernel(const unsigned *a, long n);\nvoid start(void) { kernel(0, 0); }\n",
	"vdso.c":   "int vdso_time(void) { return 42; }\n",
	"host.c":   "int main(void) { return 0; }\n",
	"boot/x.c": "void boot_start(void) {}\n",
	"vmlinux.lds": `ENTRY(start)
SECTIONS {
	. = 0x1000000;
	.text : { *(.head.text) *(.text) *(.text.*) }
	. = ALIGN(0x1000);
	.rodata : { *(.rodata) *(.rodata.*) }
	. = ALIGN(0x1000);
	.data : { *(.data) *(.data.*) }
	. = ALIGN(0x1000);
	.bss : { *(.bss) *(.bss.*) *(COMMON) }
	/DISCARD/ : { *(.comment) *(.eh_frame) *(.note.*) }
}
`,
	"Makefile": `LD = ld
CFLAGS_K = -O2 -ffreestanding -fno-pic -fno-asynchronous-unwind-tables
all:
	gcc $(CFLAGS_K) -fno-toplevel-reorder -malign-data=abi $(KCFLAGS) -c kern.c
	gcc $(CFLAGS_K) $(KCFLAGS) -c start.c
	$(LD) -r -o built-in.o start.o kern.o
	$(LD) -m elf_x86_64 -T vmlinux.lds -o .tmp_vmlinux.kallsyms1 built-in.o
	$(LD) -m elf_x86_64 -T vmlinux.lds -o vmlinux built-in.o
	gcc -fPIC -c vdso.c
	$(LD) -shared -o vdso.so vdso.o
	gcc $(CFLAGS_K) -c -o boot/x.o boot/x.c
	$(LD) -e boot_start -o boot/vmlinux boot/x.o
	gcc -o host host.c
`,
}

// kbuildOthers are the links of kbuildFiles that must not be padded.
var kbuildOthers = []string{"built-in.o", "vdso.so", "boot/vmlinux", "host"}

// TestKernelLdWrapper: the kernel preset's ld wrapper pads the links of
// vmlinux and .tmp_vmlinux*, and those only: text layouts move the code,
// data layouts the .bss and .rodata objects, by the padding's size; both
// links get the same layout (kallsyms needs it); the partial link, the
// shared object, the other vmlinux and gcc's own link are untouched; the
// restore padding gives a moved function its old offset back. Layout only:
// no kernel boots here.
func TestKernelLdWrapper(t *testing.T) {
	testutil.NeedTool(t, "gcc", "make", "nm")
	if nativeArch() != "x86_64" {
		t.Skipf("the test's linker script and -m elf_x86_64 are for x86_64, not %s", nativeArch())
	}
	p, err := LookupIn("kernel", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		dir string
		log []byte
		bin *layout.Binary
	}
	kb := func(v job.Variant, kcflags string) result {
		dir := t.TempDir()
		log := buildAt(t, dir, kbuildFiles, "make -s", map[string]string{"KCFLAGS": kcflags}, v, "vmlinux")
		return result{dir, log, open(t, filepath.Join(dir, "vmlinux"))}
	}
	plain := kb(job.Variant{}, "")
	if n := len(WrappedLinks(plain.log)); n != 0 {
		t.Errorf("plain build: %d wrapper lines", n)
	}
	for _, tc := range []struct {
		v          job.Variant
		code, objs int64
	}{{p.TextLayouts(3)[2], 32, 0}, {p.DataLayouts(3)[2], 0, 32}, {p.Layouts(3)[2], 32, 32}} {
		r := kb(tc.v, "")
		tmp := open(t, filepath.Join(r.dir, ".tmp_vmlinux.kallsyms1"))
		for _, s := range []struct {
			name string
			want int64
		}{{"kernel", tc.code}, {"start", tc.code}, {"table", tc.objs}, {"weights", tc.objs}, {"counts", 0}} {
			if got := shift(t, plain.bin, r.bin, s.name); got != s.want {
				t.Errorf("%s: %s moved %+d bytes, want %+d", tc.v.Name, s.name, got, s.want)
			}
			if sym(t, tmp, s.name).Addr != sym(t, r.bin, s.name).Addr {
				t.Errorf("%s: %s is at another address in .tmp_vmlinux.kallsyms1 than in vmlinux", tc.v.Name, s.name)
			}
		}
		links := WrappedLinks(r.log)
		if len(links) != 2 || !links[0].Padded || !links[1].Padded || links[1].Output != "vmlinux" || links[0].Tool != "ld" {
			t.Errorf("%s: wrapper lines %+v, want ld's two padded links\n%s", tc.v.Name, links, r.log)
		}
		if err := CheckWrapped(tc.v, r.log, []string{"vmlinux"}); err != nil {
			t.Error(err)
		}
		for _, f := range kbuildOthers {
			for _, s := range open(t, filepath.Join(r.dir, f)).Symbols {
				if strings.HasPrefix(s.Name, "perfbot_pad") {
					t.Errorf("%s: %s holds padding symbol %s", tc.v.Name, f, s.Name)
				}
			}
		}
	}
	// Restore: a function added before kernel (-DEXTRA) moves it; the
	// proposed padding, linked first, puts it back.
	shifted := kb(job.Variant{}, "-DEXTRA")
	if sym(t, plain.bin, "kernel").Off(64) == sym(t, shifted.bin, "kernel").Off(64) {
		t.Fatalf("-DEXTRA did not move kernel to another offset mod 64: the test program needs fixing")
	}
	pad, err := layout.ProposePadding(layout.Diff(plain.bin, shifted.bin, layout.DiffOptions{NoSource: true}), "kernel")
	if err != nil {
		t.Fatal(err)
	}
	rv, err := p.Restore(pad, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	restored := kb(rv, "-DEXTRA")
	if got, want := sym(t, restored.bin, "kernel").Off(64), sym(t, plain.bin, "kernel").Off(64); got != want {
		t.Errorf("restore by %d bytes in %s: kernel at %d mod 64, want the old %d\n%s", pad.Bytes, pad.Section, got, want, restored.log)
	}
	// Forced alignment stays KCFLAGS (and Kconfig): no wrapper.
	if fa := p.ForcedAlignment(); fa.Env[EnvWrap] != "" || fa.Env["PATH"] != "" {
		t.Errorf("kernel forced alignment puts wrappers on PATH: %v", fa.Env)
	}
	if _, err := os.Stat(filepath.Join(p.TextLayouts(2)[1].Env[EnvWrap], "ld")); err != nil {
		t.Errorf("no ld in the kernel preset's wrapper folder: %v", err)
	}
}
