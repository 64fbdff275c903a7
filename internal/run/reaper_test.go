package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperPerfbot is the test binary as a perfbot that is killed in the middle
// of a run: it runs $PERFBOT_RUN_COMMAND in $PERFBOT_RUN_DIR.
func helperPerfbot() {
	dir := os.Getenv("PERFBOT_RUN_DIR")
	s := Spec{
		Command:    os.Getenv("PERFBOT_RUN_COMMAND"),
		Dir:        dir,
		CPU:        -1,
		StdoutPath: filepath.Join(dir, "stdout"),
		StderrPath: filepath.Join(dir, "stdout"),
	}
	if _, err := Exec(context.Background(), s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// escapees returns a shell command that starts three processes "sleep m"
// that outlive sh (one in a session of its own, a background child and the
// child of an exited subshell) and waits until the three run.
func escapees(t *testing.T, m string) string {
	t.Helper()
	for _, tool := range []string{"setsid", "pgrep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	return fmt.Sprintf(`setsid sleep %[1]s & sleep %[1]s & (sleep %[1]s &); `+
		`until [ "$(pgrep -c -x -f 'sleep %[1]s')" -ge 3 ]; do sleep 0.01; done; echo started`, m)
}

// sleepers lists the processes whose command line is exactly "sleep m".
func sleepers(m string) []int {
	var found []int
	for _, p := range procs() {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline")
		if !p.dead() && string(b) == "sleep\x00"+m+"\x00" {
			found = append(found, p.pid)
		}
	}
	return found
}

// reapers lists the live supervisors started by perfbot process owner.
func reapers(owner int) []int {
	var found []int
	for _, p := range procs() {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline")
		if !p.dead() && bytes.Equal(b, []byte(reaperArg0+"\x00"+strconv.Itoa(owner)+"\x00")) {
			found = append(found, p.pid)
		}
	}
	return found
}

// TestExecKillsEscapedDescendants: processes that left sh's process group
// or lost their parent are dead (and reaped) when Exec returns, whether sh
// exits, fails or is canceled.
func TestExecKillsEscapedDescendants(t *testing.T) {
	for _, tc := range []struct {
		name, tail string
		cancel     bool
	}{
		{"exit", "; exit 0", false},
		{"fail", "; exit 3", false},
		{"cancel", "; sleep %s", true},
	} {
		m := marker()
		tail := tc.tail
		if strings.Contains(tail, "%s") {
			tail = fmt.Sprintf(tail, m)
		}
		s := spec(t, escapees(t, m)+tail)
		ctx, cancel := context.WithCancel(context.Background())
		if tc.cancel {
			go func() {
				// The three escapees and sh's own sleep.
				for len(sleepers(m)) < 4 && ctx.Err() == nil {
					time.Sleep(5 * time.Millisecond)
				}
				cancel()
			}()
		}
		res, err := Exec(ctx, s)
		cancel()
		if tc.cancel != errors.Is(err, context.Canceled) {
			t.Errorf("%s: error %v", tc.name, err)
		}
		if out := readFile(t, s.StdoutPath); out != "started\n" {
			t.Errorf("%s: stdout %q, want %q", tc.name, out, "started\n")
		}
		// No polling: Exec returns only when they are gone.
		if left := alive(res.PID, m); len(left) > 0 {
			t.Errorf("%s: processes of the run outlive Exec:\n%s", tc.name, strings.Join(left, "\n"))
		}
		if left := reapers(os.Getpid()); len(left) > 0 {
			t.Errorf("%s: supervisors outlive Exec: %v", tc.name, left)
		}
	}
}

// TestExecPerfbotKilled: when perfbot dies of SIGKILL in the middle of a
// run, everything the run started dies too, and a resumed perfbot waits
// until it has.
func TestExecPerfbotKilled(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m := marker()
	dir := t.TempDir()
	var stderr bytes.Buffer
	perfbot := exec.Command(exe)
	perfbot.Env = append(os.Environ(), "PERFBOT_RUN_HELPER=perfbot",
		"PERFBOT_RUN_COMMAND="+escapees(t, m)+"; sleep "+m, "PERFBOT_RUN_DIR="+dir)
	perfbot.Stderr = &stderr
	if err := perfbot.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = perfbot.Process.Kill()
			_ = perfbot.Wait()
		}
	}()
	deadline := time.Now().Add(time.Minute)
	for len(sleepers(m)) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not start its four sleeps: %v; perfbot: %s", sleepers(m), stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	sup := reapers(perfbot.Process.Pid)
	if len(sup) != 1 {
		t.Fatalf("supervisors of perfbot %d: %v, want one", perfbot.Process.Pid, sup)
	}
	for _, o := range orphans() {
		if o == sup[0] {
			t.Errorf("the supervisor of a live perfbot is listed as orphaned")
		}
	}

	if err := perfbot.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	_ = perfbot.Wait()
	// What a resumed perfbot does before its first run.
	if err := waitOrphans(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	left := alive(-1, m)
	if len(left) == 0 {
		return
	}
	t.Errorf("processes of the run still alive when a resumed perfbot would start measuring:\n%s", strings.Join(left, "\n"))
	deadline = time.Now().Add(30 * time.Second)
	for len(alive(-1, m)) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if left := alive(-1, m); len(left) > 0 {
		t.Errorf("and still alive 30 s later:\n%s", strings.Join(left, "\n"))
	}
}

// BenchmarkShTrue is the runner without its supervisor, for comparison with
// BenchmarkExecTrue: sh -c true started by os/exec in a process group of
// its own, logs to a file, waited for. The difference is the supervisor's
// cost per run (an exec of this binary, a socket pair, the JSON exchange).
func BenchmarkShTrue(b *testing.B) {
	s := spec(b, "true")
	for b.Loop() {
		out, err := os.Create(s.StdoutPath)
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", s.Command)
		cmd.Dir, cmd.Stdout, cmd.Stderr = s.Dir, out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		out.Close()
	}
}

// TestExecReapsOrphansDuringRun: descendants orphaned during the run are
// adopted and reaped by the supervisor while sh still runs, so they do not
// pile up as zombies.
func TestExecReapsOrphansDuringRun(t *testing.T) {
	if _, err := exec.LookPath("ps"); err != nil {
		t.Skip("ps not installed")
	}
	// Five orphans that exit at once; then wait (up to a minute) until the
	// supervisor, sh's parent, has no zombie child left, and print the count.
	s := spec(t, `for i in 1 2 3 4 5; do (sleep 0.01 &); done; sleep 0.1; n=0; `+
		`while [ "$(ps -o stat= --ppid $PPID | grep -c Z)" -gt 0 ] && [ $n -lt 6000 ]; do sleep 0.01; n=$((n+1)); done; `+
		`ps -o stat= --ppid $PPID | grep -c Z`)
	res, err := Exec(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if out := strings.TrimSpace(readFile(t, s.StdoutPath)); out != "0" {
		t.Errorf("zombie children of the supervisor during the run: %s (exit %d, stderr %q)", out, res.ExitCode, readFile(t, s.StderrPath))
	}
}
