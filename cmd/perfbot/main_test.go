package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/measure"
	runner "github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/testutil"
)

// holdLockEnv starts the test binary as another perfbot holding the
// machine's measuring lock (see holdMachineLock).
const holdLockEnv = "PERFBOT_TEST_HOLD_MACHINE_LOCK"

func TestMain(m *testing.M) {
	runner.Main() // the commands' runs re-execute this binary
	if os.Getenv(holdLockEnv) == "1" {
		os.Exit(holdLock())
	}
	code := testutil.RunWithPostgres(m)
	removeBuiltPerfbot()
	os.Exit(code)
}

// holdLock takes the machine lock, says "held" and keeps it until its
// stdin closes.
func holdLock() int {
	release, err := measure.LockMachine(context.Background(), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer release()
	fmt.Println("held")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

// holdMachineLock starts another process that holds the machine lock at
// path (PERFBOT_MACHINE_LOCK, which it sets for the test too) until the
// test ends, and returns its pid.
func holdMachineLock(t *testing.T, path string) int {
	t.Helper()
	t.Setenv(measure.MachineLockEnv, path)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdLockEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "held" {
		t.Fatalf("the lock holder said %q, %v", line, err)
	}
	if h, busy := measure.MachineHolder(); !busy {
		t.Fatalf("the lock holder says it holds the lock, but the lock is free (%q)", h)
	}
	return cmd.Process.Pid
}
