package knobs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// TestKernelKconfig runs the kernel's own Kconfig on the tree named by
// PERFBOT_KERNEL_TREE (unset in CI: the test is skipped) the way the
// preset's doc tells a build command to: from x86_64_defconfig, the
// options of PERFBOT_KCONFIG enabled with scripts/config, then
// olddefconfig. The forced-alignment option must survive, which it does
// only with EXPERT enabled too. The configs are written to a temporary
// folder (KCONFIG_CONFIG); the tree is only read, except that make builds
// the Kconfig tool there if it is not built yet.
func TestKernelKconfig(t *testing.T) {
	tree := os.Getenv("PERFBOT_KERNEL_TREE")
	if tree == "" {
		t.Skip("PERFBOT_KERNEL_TREE is not set (a Linux source tree; see docs/kernel.md)")
	}
	testutil.NeedTool(t, "make", "gcc", "flex", "bison")
	p, err := Lookup("kernel")
	if err != nil {
		t.Fatal(err)
	}
	opts := strings.Fields(p.ForcedAlignment().Env[EnvKconfig])
	config := func(enable []string) string {
		cfg := filepath.Join(t.TempDir(), "config")
		run := func(name string, args ...string) {
			cmd := exec.Command(name, args...)
			cmd.Dir = tree
			cmd.Env = append(os.Environ(), "KCONFIG_CONFIG="+cfg)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
			}
		}
		run("make", "-s", "x86_64_defconfig")
		for _, o := range enable {
			run("scripts/config", "--file", cfg, "-e", o)
		}
		run("make", "-s", "olddefconfig")
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const want = "CONFIG_" + kernelAlignOption + "=y"
	if got := config(opts); !strings.Contains(got, "\n"+want+"\n") {
		t.Errorf("PERFBOT_KCONFIG=%q on x86_64_defconfig: .config lacks %s", strings.Join(opts, " "), want)
	}
	// Without its dependency the option is dropped: the reason EXPERT is
	// in the list.
	if got := config([]string{kernelAlignOption}); strings.Contains(got, "\n"+want+"\n") {
		t.Errorf("%s alone survived olddefconfig: EXPERT is no longer needed", kernelAlignOption)
	}
}
