package build

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
)

// The test binary doubles as a perfbot that is killed while it builds.
func TestMain(m *testing.M) {
	run.Main()
	if os.Getenv("PERFBOT_BUILD_HELPER") == "build" {
		os.Exit(helperBuild())
	}
	os.Exit(m.Run())
}

// helperBuild builds HEAD of $PERFBOT_BUILD_DIR/repo with
// $PERFBOT_BUILD_COMMAND, the way setup's Builder would.
func helperBuild() int {
	ctx := context.Background()
	dir := os.Getenv("PERFBOT_BUILD_DIR")
	repo, err := gitrev.Open(ctx, filepath.Join(dir, "repo"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c, err := repo.Resolve(ctx, "HEAD")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st, err := store.Open(filepath.Join(dir, ".perfbot"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	b := &Builder{Repo: repo, Store: st, Dir: filepath.Join(dir, ".perfbot")}
	if _, err := b.Build(ctx, testJob(os.Getenv("PERFBOT_BUILD_COMMAND"), "prog"), c, job.Variant{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// escapingBuild returns a build command that starts processes "sleep m"
// that leave the build's process group or lose their parent, and waits
// until they run.
func escapingBuild(t *testing.T, m string) string {
	for _, tool := range []string{"setsid", "pgrep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	return fmt.Sprintf(`setsid sleep %[1]s & (sleep %[1]s &); `+
		`until [ "$(pgrep -c -x -f 'sleep %[1]s')" -ge 2 ]; do sleep 0.01; done; echo > prog`, m)
}

// sleepers lists the live processes whose command line is "sleep m".
func sleepers(m string) []string {
	var found []string
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(b, []byte("sleep\x00"+m+"\x00")) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] != "Z" {
			found = append(found, filepath.Dir(p))
		}
	}
	return found
}

func marker() string { return fmt.Sprintf("400.%09d", rand.IntN(1e9)) }

// TestBuildKillsLeftovers: nothing the build command started outlives the
// build, even in a session of its own.
func TestBuildKillsLeftovers(t *testing.T) {
	b, c := setup(t, map[string]string{"main.c": "int main(void){return 0;}\n"})
	m := marker()
	if _, err := b.builder.Build(context.Background(), testJob(escapingBuild(t, m), "prog"), c, job.Variant{}); err != nil {
		t.Fatal(err)
	}
	if left := sleepers(m); len(left) > 0 {
		t.Errorf("processes started by the build outlive it: %v", left)
	}
}

// TestBuildPerfbotKilled: when perfbot dies of SIGKILL during a build,
// everything the build started dies too.
func TestBuildPerfbotKilled(t *testing.T) {
	bu, _ := setup(t, map[string]string{"main.c": "int main(void){return 0;}\n"})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m := marker()
	var stderr bytes.Buffer
	perfbot := exec.Command(exe)
	perfbot.Env = append(os.Environ(), "PERFBOT_BUILD_HELPER=build", "PERFBOT_BUILD_DIR="+bu.dir,
		"PERFBOT_BUILD_COMMAND="+strings.TrimSuffix(escapingBuild(t, m), "echo > prog")+"sleep "+m)
	perfbot.Stderr = &stderr
	if err := perfbot.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for len(sleepers(m)) < 3 {
		if time.Now().After(deadline) {
			_ = perfbot.Process.Kill()
			_ = perfbot.Wait()
			t.Fatalf("the build did not start its sleeps; perfbot: %s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = perfbot.Process.Signal(syscall.SIGKILL)
	_ = perfbot.Wait()
	deadline = time.Now().Add(30 * time.Second)
	for len(sleepers(m)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes started by the build outlive the killed perfbot: %v", sleepers(m))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
