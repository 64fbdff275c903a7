package measure

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/store"
)

// Review: a failed run is stored and counted as done, and the job key
// leaves out run.timeout, so fixing the cause (a missing input, a too-short
// timeout) and running the same command again takes no new run: the
// failures stay in every later comparison.
func TestReviewFailedRunsAreNeverRetaken(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "input-present")
	opt, targets := setup(t, "test -f "+flag+" || { echo missing input >&2; exit 1; }; echo work_ms: VERSION.5\n")
	j := loadJob(t, "3")
	out, err := Measure(context.Background(), j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	if out.Targets[0].Runs[0].Status != store.RunCrashed {
		t.Fatalf("run without input: status %q", out.Targets[0].Runs[0].Status)
	}
	// The user fixes the environment and re-runs the same command.
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = Measure(context.Background(), j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for _, tg := range out.Targets {
		for _, r := range tg.Runs {
			if r.Status == store.RunOK {
				ok++
			}
		}
	}
	if ok == 0 {
		t.Errorf("after fixing the cause, the second measure took %d runs and still has 0 OK runs: failed runs are sticky", out.Taken)
	}
}
