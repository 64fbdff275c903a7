package fleet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestServerGCLoop: the server's collection removes its workspace's old
// worktrees (real git worktrees of a real repository) on its period, and
// leaves the one a build holds (its in-use lock); stop waits for it.
func TestServerGCLoop(t *testing.T) {
	r := testutil.NewGitRepo(t)
	head := r.Commit("base", map[string]string{"a.c": "int main(void){return 0;}\n"})
	dir := filepath.Join(t.TempDir(), ".perfbot")
	wts := []string{filepath.Join(dir, "worktrees", "old"), filepath.Join(dir, "worktrees", "held")}
	for _, wt := range wts {
		r.Git("worktree", "add", "--detach", wt, head)
	}
	f, err := os.OpenFile(wts[1]+".use", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	var g gcLoop
	var logged []string
	logs := make(chan string, 16)
	noBlobs := func(context.Context) (BlobGC, error) { return BlobGC{}, nil }
	g.start(dir, build.Budget{MaxAge: time.Nanosecond}, 20*time.Millisecond, noBlobs, func(format string, args ...any) {
		select {
		case logs <- format:
		default:
		}
	})
	deadline := time.After(30 * time.Second)
	for {
		if _, err := os.Stat(wts[0]); os.IsNotExist(err) {
			break
		}
		select {
		case l := <-logs:
			logged = append(logged, l)
		case <-deadline:
			g.stop()
			t.Fatalf("the old worktree is still there after 30 s (logged %v)", logged)
		case <-time.After(10 * time.Millisecond):
		}
	}
	g.stop()
	if _, err := os.Stat(wts[1]); err != nil {
		t.Errorf("the worktree a build holds was removed: %v", err)
	}
	if list := r.Git("worktree", "list"); strings.Contains(list, wts[0]) {
		t.Errorf("git still lists the removed worktree:\n%s", list)
	}
}
