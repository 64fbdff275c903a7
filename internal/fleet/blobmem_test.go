package fleet_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/fleet"
)

// Worker memory in TestArtifactLargerThanWorkerMemory: each worker runs
// with GOMEMLIMIT at workerGoLimit and must peak (its maximum resident
// set, VmHWM in /proc) under workerMemLimit, while it moves two
// artifacts of bigArtifact bytes each, several times its limit.
const (
	workerGoLimit  = 32 << 20
	workerMemLimit = 64 << 20
	bigArtifact    = 3 * workerMemLimit
)

// TestArtifactLargerThanWorkerMemory: real `perfbot worker` processes
// move artifacts three times larger than their memory limit through the
// fleet's database. Worker m1 builds both commits of a comparison (each
// build writes a 192 MiB artifact of random bytes beside the benchmark)
// and uploads them; it is stopped. Worker m2 then takes a fourth run of
// each commit (a second comparison, one run more): it builds each commit itself (other
// random bytes), uploads no artifact (the key has m1's record), and
// downloads m1's artifacts to run them. Each worker's peak resident set
// stays under its limit, m2's artifacts are byte-identical to m1's, and
// the database holds each artifact once.
func TestArtifactLargerThanWorkerMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 768 MiB through PostgreSQL")
	}
	mk := fmt.Sprintf("bench: bench.c\n\tgcc -O2 $(CFLAGS) -o bench bench.c\n\thead -c %d /dev/urandom > big\n", bigArtifact)
	f := newFixtureWith(t, 3, 100000, mk, mk)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Two jobs with one build key; the second wants a run more of each
	// commit, so its comparison runs the artifacts again (on m2).
	spec := func(name string, runs int) fleet.JobSpec {
		data := fmt.Appendf(nil, `repo: %s
build: {command: make bench, artifacts: [bench, big], timeout: 2m}
run: {command: ./bench 100000, timeout: 20s}
runs: %d
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`, filepath.Base(f.repo.Dir), runs)
		file := filepath.Join(f.repo.Dir, "..", name+".yaml")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return fleet.JobSpec{File: file, Data: data, Name: name}
	}
	t.Setenv("GOMEMLIMIT", fmt.Sprint(workerGoLimit))

	compare := func(machine string, job fleet.JobSpec) {
		t.Helper()
		w := f.worker(t, machine, 0)
		row, err := f.server.EnqueueCompare(ctx, fleet.CompareArgs{Job: job, Class: "test", Commits: f.commits})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out := awaitCompare(ctx, t, f.server.River, row.ID, 200*time.Millisecond)
		took := time.Since(start)
		rss := peakRSS(t, w.Process.Pid)
		if err := w.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := w.Wait(); err != nil {
			t.Fatalf("worker %s: %v", machine, err)
		}
		// The rusage's maximum is that of the worker and every process it
		// waited for (make, gcc, the benchmark): shown, not checked.
		tree := w.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
		t.Logf("worker %s: the comparison took %v, peak resident set %d MiB (GOMEMLIMIT %d MiB, limit %d MiB, artifacts of %d MiB; "+
			"its largest child's or its own %d MiB); %d runs taken",
			machine, took.Round(time.Second), rss>>20, workerGoLimit>>20, workerMemLimit>>20, bigArtifact>>20, tree>>20, out.Taken)
		if rss >= workerMemLimit {
			t.Errorf("worker %s peaked at %d MiB, over its %d MiB limit, moving %d MiB artifacts", machine, rss>>20, workerMemLimit>>20, bigArtifact>>20)
		}
		if out.Taken == 0 {
			t.Errorf("worker %s took no run: the comparison ran no artifact", machine)
		}
	}
	compare("m1", spec("job", 3))
	compare("m2", spec("job2", 4))

	// m2 runs m1's bytes, not its own build's.
	arts, _ := filepath.Glob(filepath.Join(f.dir, "m1", ".perfbot", "builds", "*", "artifacts", "big"))
	if len(arts) != 2 {
		t.Fatalf("m1 cached %d big artifacts, want 2 (one per commit): %v", len(arts), arts)
	}
	for _, a := range arts {
		rel, _ := filepath.Rel(filepath.Join(f.dir, "m1"), a)
		want, got := fileSum(t, a), fileSum(t, filepath.Join(f.dir, "m2", rel))
		if got != want {
			t.Errorf("m2's %s has SHA-256 %.12s, m1 built %.12s", rel, got, want)
		}
	}
	var stored int64
	if err := f.pool.QueryRow(ctx, `SELECT sum(size) FROM perfbot_fleet_blobs`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored < 2*bigArtifact || stored > 2*bigArtifact+8<<20 {
		t.Errorf("the fleet stores %d MiB of blobs, want each %d MiB artifact once", stored>>20, bigArtifact>>20)
	}
}

// peakRSS is the peak resident set of process pid itself, in bytes
// (VmHWM in /proc/pid/status: its children's are not counted).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if kib, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kib), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("/proc/%d/status: %q: %v", pid, line, err)
			}
			return n << 10
		}
	}
	t.Fatalf("/proc/%d/status has no VmHWM", pid)
	return 0
}

// fileSum is the SHA-256 of the file at path ("" when it is missing).
func fileSum(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
