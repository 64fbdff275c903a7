package fleet_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/internal/fleet"
)

// TestWorkerRestarted: the worker taking a comparison's rounds is
// SIGKILLed in the middle of a run and started again, as the same machine,
// before the machine counts as dead. The new process may register only
// once the old one's heartbeat is stale; the server then cancels and
// queues again only the round the killed process had taken, and leaves
// the rounds waiting in the machine's queue (and any the new process
// takes) alone: every cancelled round job is one the killed process took.
func TestWorkerRestarted(t *testing.T) {
	const runs = 3
	// The restarted process must register before the machine counts as
	// dead: a DeadAfter well beyond a loaded host's process start.
	defer func(d time.Duration) { fixtureDeadAfter = d }(fixtureDeadAfter)
	fixtureDeadAfter = 20 * time.Second
	f := newFixture(t, runs, 3000000)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := f.worker(t, "x1", 0)
	row, err := f.server.EnqueueCompare(ctx, fleet.CompareArgs{Job: f.spec, Class: "test", Commits: f.commits})
	if err != nil {
		t.Fatal(err)
	}
	var killed *rivertype.JobRow
	for killed == nil {
		if ctx.Err() != nil {
			t.Fatal("round 1 never ran")
		}
		if j := roundRunning(t, f, 1); j != nil && benchRunning(filepath.Join(f.dir, "x1")) {
			killed = j
			if err := w.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = w.Wait()
			t.Logf("killed x1 in the middle of round job %d", j.ID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	by := killed.AttemptedBy[len(killed.AttemptedBy)-1]
	// The worker's heartbeat (500ms) stays fresh for 1.5 s: start it
	// again as soon as that is over, well before DeadAfter (20 s here).
	for {
		ms, ages, err := fleet.Machines(ctx, f.pool, "test")
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 1 && ages[0] >= time.Duration(fleet.Fresh)*ms[0].Beat {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.worker(t, "x1", 0)
	out := awaitCompare(ctx, t, f.server.River, row.ID, 100*time.Millisecond)
	if len(out.Rounds) != runs {
		t.Errorf("rounds %v: want %d", out.Rounds, runs)
	}
	requeued := false
	for _, j := range jobs(t, f.server.River, "perfbot.round") {
		var a fleet.RoundArgs
		_ = json.Unmarshal(j.EncodedArgs, &a)
		if cancelled(j) && (len(j.AttemptedBy) == 0 || j.AttemptedBy[len(j.AttemptedBy)-1] != by) {
			t.Errorf("round %d (job %d, %s, attempted by %v) was cancelled, but the killed process (%s) never took it",
				a.Round, j.ID, j.State, j.AttemptedBy, by)
		}
		if a.Round == 1 && a.Move == 1 && j.State == rivertype.JobStateCompleted {
			requeued = true
			if slices.Contains(j.AttemptedBy, by) {
				t.Errorf("round 1 queued again was taken by the killed process")
			}
		}
	}
	if !requeued {
		t.Errorf("round 1 was not queued again (Move 1) and completed")
	}
}
