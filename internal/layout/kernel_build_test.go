package layout

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/testutil"
)

// kernelTarball is Debian's linux-source-6.1 package's tree.
const kernelTarball = "/usr/src/linux-source-6.1.tar.xz"

// kernelKeyAnchor is the line of arch/x86/kernel/cpu/bugs.c after which
// the kernel defined mds_user_clear before upstream commit 6613d82e61
// ("x86/bugs: Use ALTERNATIVE() instead of mds_user_clear static key")
// removed it; Debian's 6.1 has that commit.
const kernelKeyAnchor = "DEFINE_STATIC_KEY_FALSE(switch_mm_always_ibpb);\n"

// kernelKey is what the base build has there and the changed one lacks.
const kernelKey = `
/* Control MDS CPU buffer clear before returning to user space */
DEFINE_STATIC_KEY_FALSE(mds_user_clear);
EXPORT_SYMBOL_GPL(mds_user_clear);
`

// kernelTree is one unpacked, configured kernel tree and the builds made
// in it.
type kernelTree struct {
	dir          string // the source tree, built in place
	base, change string // copies of vmlinux: with the key, without it
	bugs         []byte // bugs.c as shipped (without the key)
}

// kernelEnv makes kernel builds reproducible: the same timestamp, user,
// host and build number in every build. Without the number, a tree built
// on again and again counts its builds in linux_banner ("#9" becomes
// "#10"), which resizes the banner and moves what follows it.
var kernelEnv = []string{"KBUILD_BUILD_TIMESTAMP=2024-01-01", "KBUILD_BUILD_USER=perfbot", "KBUILD_BUILD_HOST=perfbot", "KBUILD_BUILD_VERSION=1"}

// kernelConfig is the tinyconfig case: a 64-bit kernel with static keys
// (JUMP_LABEL), exports (MODULES), the symbol table of every symbol
// (KALLSYMS_ALL), whose tables in .rodata change size when a symbol goes,
// and the BPF interpreter (BPF_SYSCALL), whose jump table lies in .rodata
// after them, as in a defconfig kernel.
var kernelConfig = []string{"-e", "64BIT", "-e", "JUMP_LABEL", "-e", "MODULES", "-e", "KALLSYMS", "-e", "KALLSYMS_ALL", "-e", "BPF_SYSCALL"}

// make runs make in the tree with the fixed build environment, and logs
// how long it took.
func (k *kernelTree) make(t *testing.T, args ...string) {
	t.Helper()
	start := time.Now()
	runIn(t, k.dir, "make", append([]string{"-s", fmt.Sprintf("-j%d", runtime.NumCPU())}, args...)...)
	t.Logf("make %s: %.1f s", strings.Join(args, " "), time.Since(start).Seconds())
}

// runIn runs a command in dir with kernelEnv, failing the test with its
// output when it fails.
func runIn(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), kernelEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		tail := out
		if len(tail) > 4000 {
			tail = tail[len(tail)-4000:]
		}
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, tail)
	}
}

// kernelBuildEnv names a folder that keeps the tree and its builds
// between test runs (unset: a temporary folder, removed after the test).
const kernelBuildEnv = "PERFBOT_KERNEL_BUILD"

// buildKernelPair unpacks Debian's 6.1 tree into a temporary folder,
// builds the tinyconfig case with the key (the base), then, after putting
// bugs.c back as shipped, again (a one-file rebuild: the change). About 4
// minutes on 2 quiet cores. With PERFBOT_KERNEL_BUILD set to a folder that
// holds such a tree, only the change is rebuilt.
func buildKernelPair(t *testing.T) *kernelTree {
	t.Helper()
	top := os.Getenv(kernelBuildEnv)
	if top == "" {
		top = t.TempDir()
	} else {
		lockKernelBuild(t, top)
	}
	k := &kernelTree{dir: filepath.Join(top, "linux-source-6.1"), base: filepath.Join(top, "base.vmlinux"), change: filepath.Join(top, "changed.vmlinux")}
	bugs := filepath.Join(k.dir, "arch/x86/kernel/cpu/bugs.c")
	saved := filepath.Join(top, "bugs.c.orig")
	// The base is reused only when it was built with this environment and
	// configuration.
	stamp := filepath.Join(top, "build.stamp")
	want := strings.Join(append(slices.Clone(kernelEnv), kernelConfig...), "\n") + "\n"
	if orig, err := os.ReadFile(saved); err == nil {
		if got, _ := os.ReadFile(stamp); string(got) != want {
			t.Logf("%s=%s: its base build was made with another environment or configuration; building it again", kernelBuildEnv, top)
		} else if _, err := os.Stat(k.base); err == nil {
			t.Logf("%s=%s: reusing its base build", kernelBuildEnv, top)
			k.bugs = orig
			if err := os.WriteFile(bugs, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			k.make(t, "vmlinux")
			runIn(t, top, "cp", filepath.Join(k.dir, "vmlinux"), k.change)
			return k
		}
	}
	// A tree without a finished base build (a run stopped in the middle)
	// is unpacked again, not built on.
	if err := os.RemoveAll(k.dir); err != nil {
		t.Fatal(err)
	}
	runIn(t, top, "tar", "xf", kernelTarball)
	orig, err := os.ReadFile(bugs)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(orig, []byte("mds_user_clear")) || bytes.Count(orig, []byte(kernelKeyAnchor)) != 1 {
		t.Fatalf("%s: want one %q and no mds_user_clear (Debian's 6.1 tree); the tree changed", bugs, strings.TrimSpace(kernelKeyAnchor))
	}
	k.bugs = orig
	withKey := bytes.Replace(orig, []byte(kernelKeyAnchor), []byte(kernelKeyAnchor+kernelKey), 1)
	if err := os.WriteFile(bugs, withKey, 0o644); err != nil {
		t.Fatal(err)
	}
	k.make(t, "tinyconfig")
	runIn(t, k.dir, "scripts/config", kernelConfig...)
	k.make(t, "olddefconfig")
	k.make(t, "vmlinux")
	runIn(t, top, "cp", filepath.Join(k.dir, "vmlinux"), k.base)
	if err := os.WriteFile(saved, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stamp, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bugs, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	k.make(t, "vmlinux")
	runIn(t, top, "cp", filepath.Join(k.dir, "vmlinux"), k.change)
	return k
}

// lockKernelBuild holds an exclusive lock on the folder of
// PERFBOT_KERNEL_BUILD until the test ends, so that two test processes
// that share it (two CI runs on one machine) take turns with its tree.
func lockKernelBuild(t *testing.T, top string) {
	t.Helper()
	if err := os.MkdirAll(top, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(top, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("%s=%s: locking it: %v", kernelBuildEnv, top, err)
	}
	t.Cleanup(func() { f.Close() })
}

// TestKernelTinyconfigKey builds a real kernel twice (Debian's 6.1,
// tinyconfig with 64BIT, JUMP_LABEL, MODULES, KALLSYMS_ALL): the base
// defines mds_user_clear and exports it, as the kernel did before upstream
// removed it; the change is the tree as shipped. The diff must trace every
// shift run to a root change that names what changed, rank the key's
// removal first, and the source patch must put back what it moved. One
// build of the base and two one-file rebuilds, in one tree.
func TestKernelTinyconfigKey(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds a kernel (about 4 minutes)")
	}
	testutil.NeedTool(t, "gcc", "make", "flex", "bison", "bc", "gelf.h", "linux-source-6.1")
	k := buildKernelPair(t)
	base, change := mustOpen(t, k.base), mustOpen(t, k.change)
	d := Diff(base, change, DiffOptions{NoSource: true})
	checkTraceInvariants(t, d)
	t.Logf("%d symbols; %d moved in %d runs, %d root changes:\n%s", len(change.Symbols), d.Stats.Moved, len(d.Runs), len(d.RootChanges), describeRuns(d))

	if len(d.Removed) != 1 || d.Removed[0].Name != "mds_user_clear" || len(d.Added) != 0 {
		t.Fatalf("removed %v, added %v: want only mds_user_clear removed", names(d.Removed), names(d.Added))
	}
	// Every run that moved names what moved it: a symbol, a table, a
	// section, through realignment; none says only "padding changed".
	for i := range d.Runs {
		r := &d.Runs[i]
		if r.Shift == 0 || r.RootChange < 0 {
			continue
		}
		if rc := &d.RootChanges[r.RootChange]; !rc.Traced {
			t.Errorf("run %+d from %s (%s) has an untraced root change %q: %s", r.Shift, r.First.Name(), r.Section, rc, d.Runs[rc.Roots[0]].Break)
		}
	}
	// The key's removal is the first root change and moved the most.
	key := &d.RootChanges[0]
	if !causeNamed(key.Causes, Removed, "mds_user_clear") {
		t.Errorf("first root change %q, want the removal of mds_user_clear", key)
	}
	// The .rodata data after the symbol table (kallsyms), which has no
	// sized symbols, only labels: its run names the tables that shrank
	// and the names they lost, the key's among them, so it is part of the
	// key's root change.
	var tables *Run
	for i := range d.Runs {
		if r := &d.Runs[i]; r.Section == ".rodata" && r.Shift != 0 && r.Root == i && len(r.Tables) > 0 && r.Tables[0].Until != "" {
			tables = r
		}
	}
	switch {
	case tables == nil:
		t.Errorf("no .rodata run traced to tables between labels")
	case !slices.Contains(tables.Tables[0].Names, "mds_user_clear") || tables.RootChange != 0:
		t.Errorf("the .rodata run from %s after the symbol table: names %v, root change %d; want mds_user_clear's, root change 0",
			tables.First.Name(), tables.Tables[0].Names, tables.RootChange)
	}
	// The .bss objects after the key moved by its size.
	after := changeOf(t, d, "switch_mm_always_ibpb")
	if after.Shift() != -16 || d.RootOf(after) != key {
		t.Errorf("switch_mm_always_ibpb: shift %d, root change %v", after.Shift(), d.RootOf(after))
	}

	t.Run("restore", func(t *testing.T) { kernelRestore(t, k, base, change, d) })
}

// kernelRestore makes the source patch for the key's removal, builds it
// and checks that every run the removal moved, in every section, is back.
func kernelRestore(t *testing.T, k *kernelTree, base, change *Binary, d *DiffResult) {
	root, err := PatchRootNamed(d, "mds_user_clear")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := SourcePatchWith(base, change, root, PatchOptions{SrcDir: k.dir, Suspect: "switch_mm_always_ibpb"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("patch:\n%s", sp.Diff)
	if sp.File != "arch/x86/kernel/cpu/bugs.c" {
		t.Fatalf("patch for %s, want bugs.c", sp.File)
	}
	if err := sp.Apply(k.dir); err != nil {
		t.Fatal(err)
	}
	k.make(t, "vmlinux")
	patched := mustOpen(t, filepath.Join(k.dir, "vmlinux"))
	r := sp.Check(patched, base)
	t.Logf("check: %s", r)
	if !r.Restored {
		t.Errorf("not restored: %s", r)
	}
	if len(r.Runs) == 0 {
		t.Fatalf("the check lists none of the runs the removal moved")
	}
	for _, rb := range r.Runs {
		if rb.Back != rb.Count && rb.Why == "" {
			t.Errorf("run %+d from %s (%s): %d of %d back, and the check does not say why", rb.Shift, rb.From, rb.Section, rb.Back, rb.Count)
		}
	}
}

// causeNamed reports whether cs has a cause of kind about symbol name.
func causeNamed(cs []Cause, kind CauseKind, name string) bool {
	for _, c := range cs {
		if c.Kind == kind && c.Symbol != nil && c.Symbol.Name == name {
			return true
		}
	}
	return false
}
