package knobs

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/testutil"
)

// envBuild is the build command of docs/knobs.md's example: it maps the
// PERFBOT_* variables to gcc flags and to a padding object made from
// tools/pad.c.
const envBuild = `set -e
cc -c -DTEXT_PAD=${PERFBOT_TEXT_PAD:-0} -DDATA_PAD=${PERFBOT_DATA_PAD:-0} -o pad.o tools/pad.c
make -s prog EXTRA_OBJS=pad.o CFLAGS="${PERFBOT_FUNC_ALIGN:+-falign-functions=$PERFBOT_FUNC_ALIGN -falign-loops=$PERFBOT_FUNC_ALIGN}"`

// padC makes TEXT_PAD bytes of code and DATA_PAD bytes of zeroed data.
const padC = `#define S(x) S2(x)
#define S2(x) #x
#if TEXT_PAD > 0
__asm__(".section .text.unlikely,\"ax\",@progbits\n.p2align 4\n.skip " S(TEXT_PAD) ", 0xcc\n.text\n");
#endif
#if DATA_PAD > 0
__attribute__((aligned(16))) char pad_data[DATA_PAD];
#endif
`

func envProgram() map[string]string {
	files := map[string]string{"tools/pad.c": padC}
	for k, s := range cProgram {
		files[k] = s
	}
	return files
}

// TestEnvPreset: a build that maps the env preset's variables itself (the
// documented recipe) gets the same moves as the c preset.
func TestEnvPreset(t *testing.T) {
	testutil.NeedTool(t, "gcc", "make")
	p, err := Lookup("env")
	if err != nil {
		t.Fatal(err)
	}
	b := func(v job.Variant) *layout.Binary {
		return open(t, filepath.Join(buildIn(t, envProgram(), envBuild, nil, v), "prog"))
	}
	plain := b(job.Variant{})
	al := b(p.ForcedAlignment())
	if off := sym(t, al, "kernel").Off(64); off != 0 {
		t.Errorf("PERFBOT_FUNC_ALIGN=64: kernel at %d mod 64, want 0", off)
	}
	text := b(p.TextLayouts(3)[2])
	if got := shift(t, plain, text, "kernel"); got != 32 {
		t.Errorf("PERFBOT_TEXT_PAD=32: kernel moved %+d, want +32", got)
	}
	if got := shift(t, plain, text, "table"); got != 0 {
		t.Errorf("PERFBOT_TEXT_PAD=32: table moved %+d, want 0", got)
	}
	data := b(p.DataLayouts(2)[1])
	if got := shift(t, plain, data, "table"); got != 16 {
		t.Errorf("PERFBOT_DATA_PAD=16: table moved %+d, want +16", got)
	}
	if got := shift(t, plain, data, "kernel"); got != 0 {
		t.Errorf("PERFBOT_DATA_PAD=16: kernel moved %+d, want 0", got)
	}
	v := p.Layouts(4)[3]
	for _, k := range []string{EnvTextPad, EnvDataPad, EnvLayoutSeed, EnvEnvPad} {
		if v.Env[k] == "" {
			t.Errorf("env layout 3 does not set %s: %v", k, v.Env)
		}
	}
	pad := &layout.Padding{Symbol: "table", Kind: layout.Object, Section: ".bss", Bytes: 16}
	r, err := p.Restore(pad, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if r.Env[EnvDataPad] != "16" || r.Env[EnvPadSymbol] != "table" || r.Env[EnvPadSection] != ".bss" || r.Env[EnvPadAsm] == "" {
		t.Errorf("env restore = %v, want PERFBOT_DATA_PAD=16, the symbol, the section and the assembler file", r.Env)
	}
}

// TestKernelPreset: the kernel preset's forced alignment says KCFLAGS and
// the Kconfig option, and the KCFLAGS really align functions when a
// kbuild-like Makefile adds them to every compilation.
func TestKernelPreset(t *testing.T) {
	testutil.NeedTool(t, "gcc", "make")
	p, err := Lookup("kernel")
	if err != nil {
		t.Fatal(err)
	}
	v := p.ForcedAlignment()
	if v.Env[EnvKconfig] != "EXPERT DEBUG_FORCE_FUNCTION_ALIGN_64B" || !strings.Contains(v.Env["KCFLAGS"], "-falign-functions=64") {
		t.Errorf("kernel forced alignment = %v", v.Env)
	}
	files := envProgram()
	files["Makefile"] = "prog:\n\t$(CC) -O2 $(KCFLAGS) -c -o kern.o kern.c\n\t$(CC) -O2 $(KCFLAGS) -c -o main.o main.c\n\t$(CC) -o prog kern.o main.o\n"
	kb := func(v job.Variant) *layout.Binary {
		return open(t, filepath.Join(buildIn(t, files, "make -s prog", map[string]string{"KCFLAGS": "-DEXTRA"}, v), "prog"))
	}
	al := kb(v)
	if off := sym(t, al, "kernel").Off(64); off != 0 {
		t.Errorf("KCFLAGS forced alignment: kernel at %d mod 64, want 0", off)
	}
	if len(al.Lookup("extra")) != 1 {
		t.Errorf("the job's own KCFLAGS (-DEXTRA) were lost")
	}
	// The layouts and the restore pad the vmlinux link through the ld
	// wrapper: TestKernelLdWrapper (wrap_ld_test.go) builds them.
	if got := len(p.TextLayouts(100)); got != MaxLayouts {
		t.Errorf("kernel TextLayouts(100) = %d layouts, want %d", got, MaxLayouts)
	}
	if got := len(p.DataLayouts(4)); got != 4 {
		t.Errorf("kernel DataLayouts(4) = %d layouts, want 4", got)
	}
}

// TestEnvPaddingMovesStack: PERFBOT_ENV_PAD, which reaches the runs through
// the variant's environment, moves the stack of the benchmark process by
// its length (Mytkowicz et al.).
func TestEnvPaddingMovesStack(t *testing.T) {
	testutil.NeedTool(t, "gcc", "make")
	dir := buildIn(t, cProgram, "make -s prog", nil, job.Variant{})
	stack := func(v job.Variant) uint64 {
		t.Helper()
		cmd := exec.Command("setarch", "-R", filepath.Join(dir, "prog"))
		cmd.Env = build.Env(&job.Job{}, strings.Repeat("0", 40), v, nil)
		out, err := cmd.Output()
		if err != nil {
			testutil.SkipIncapable(t, "cannot run with address randomisation off (setarch -R): %v", err)
		}
		m := regexp.MustCompile(`stack: (\d+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("no stack line in %q", out)
		}
		n, _ := strconv.ParseUint(string(m[1]), 10, 64)
		return n
	}
	testutil.NeedTool(t, "setarch")
	base := stack(job.Variant{Name: "env0", Env: map[string]string{EnvEnvPad: ""}})
	for _, n := range []int{16, 64, 256} {
		got := base - stack(EnvPadding(n))
		if got < uint64(n) || got > uint64(n)+16 {
			t.Errorf("PERFBOT_ENV_PAD of %d bytes moved the stack by %d bytes, want %d to %d", n, got, n, n+16)
		}
	}
	if v := EnvPadding(0); v.Name != "" || len(v.Env) != 0 {
		t.Errorf("EnvPadding(0) = %+v, want the plain build", v)
	}
	if ls := StackLayouts(3); len(ls) != 3 || ls[2].Env[EnvEnvPad] != strings.Repeat("x", 32) {
		t.Errorf("StackLayouts(3) = %v", ls)
	}
}

// TestLookup: every documented name resolves, aliases to the c preset,
// and unknown names fail naming the valid ones.
func TestLookup(t *testing.T) {
	for _, name := range Names() {
		p, err := LookupIn(name, t.TempDir())
		if err != nil {
			t.Errorf("LookupIn(%q): %v", name, err)
			continue
		}
		want := name
		if name == "gcc" || name == "clang" {
			want = "c"
		}
		if p.Name() != want || p.Doc() == "" {
			t.Errorf("LookupIn(%q) = %q (%q), want %q with a doc line", name, p.Name(), p.Doc(), want)
		}
		if v := p.ForcedAlignment(); v.Name != AlignName || v.Env[EnvFuncAlign] != "64" {
			t.Errorf("%s ForcedAlignment = %+v", name, v)
		}
		for _, ls := range [][]job.Variant{p.TextLayouts(4), p.DataLayouts(4), p.Layouts(4)} {
			names := map[string]bool{}
			for i, v := range ls {
				if (i == 0) != (v.Name == "") || names[v.Name] {
					t.Errorf("%s: layouts %v: want the plain build first, then distinct names", name, ls)
				}
				names[v.Name] = true
			}
		}
	}
	for _, bad := range []string{"", "fortran"} {
		if _, err := Lookup(bad); err == nil || !strings.Contains(err.Error(), "kernel") {
			t.Errorf("Lookup(%q): err = %v, want an error listing the presets", bad, err)
		}
	}
}
