package measure

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/internal/store"
)

// rounder is a RoundExecutor that takes each round on its own goroutine,
// as a fleet takes rounds on several machines, running the tasks of a
// round in order with Local (each in a fresh log folder of its own).
type rounder struct {
	mu     sync.Mutex
	rounds [][]Task
}

func (r *rounder) Execute(context.Context, Task) (*store.RunRecord, error) {
	panic("a RoundExecutor is given rounds, never single runs")
}

func (r *rounder) ExecuteRounds(ctx context.Context, rounds [][]Task, done func(int, []*store.RunRecord) error) error {
	r.mu.Lock()
	r.rounds = append(r.rounds, rounds...)
	r.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(rounds))
	for i, tasks := range rounds {
		wg.Go(func() {
			var recs []*store.RunRecord
			for _, t := range tasks {
				if t.LogDir != "" {
					errs[i] = os.ErrInvalid // the machine keeps the logs
					return
				}
				dir, err := os.MkdirTemp("", "round")
				if err != nil {
					errs[i] = err
					return
				}
				defer os.RemoveAll(dir)
				t.LogDir = dir
				rec, err := Local{CPU: -1, Machine: "m" + string(rune('a'+i%3))}.Execute(ctx, t)
				if err != nil {
					errs[i] = err
					return
				}
				if !t.Warmup {
					recs = append(recs, rec)
				}
			}
			errs[i] = done(i, recs)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestRoundExecutor: a RoundExecutor gets the plan as whole rounds (every
// target once, the warm-ups at the head of the first), may take them
// concurrently, and what it returns is stored with the measurement's
// session and the machine it names; whole rounds come out complete.
func TestRoundExecutor(t *testing.T) {
	opt, targets := setup(t, "echo work_ms: VERSION.5\n")
	rx := &rounder{}
	opt.Executor = rx
	opt.WholeRounds = true
	out, err := Measure(context.Background(), loadJob(t, "4"), targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rx.rounds) != 4 {
		t.Fatalf("executor got %d rounds, want 4", len(rx.rounds))
	}
	for i, r := range rx.rounds {
		var measured []int
		warm := 0
		for _, task := range r {
			if task.Warmup {
				warm++
				continue
			}
			measured = append(measured, task.Key.Index)
			if task.Session != out.Session || task.Build == nil {
				t.Errorf("round %d task %s: want the session and the build", i, task.Key)
			}
		}
		if want := map[bool]int{true: 2, false: 0}[i == 0]; warm != want {
			t.Errorf("round %d has %d warm-ups, want %d", i, warm, want)
		}
		if len(measured) != 2 || measured[0] != measured[1] {
			t.Errorf("round %d takes runs %v: want one run of each target with one number", i, measured)
		}
	}
	if len(out.Rounds) != 4 || out.Taken != 8 {
		t.Errorf("rounds %v, taken %d: want 4 complete rounds and 8 runs", out.Rounds, out.Taken)
	}
	for _, tg := range out.Targets {
		for _, r := range tg.Runs {
			if r.Session != out.Session || !slices.Contains([]string{"ma", "mb", "mc"}, r.Machine) || r.Status != store.RunOK {
				t.Errorf("stored run %d: session %q machine %q status %s", r.Index, r.Session, r.Machine, r.Status)
			}
		}
	}
	// A second measurement finds everything stored and takes nothing.
	again, err := Measure(context.Background(), loadJob(t, "4"), targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	if again.Taken != 0 || len(rx.rounds) != 4 {
		t.Errorf("second measurement took %d runs in %d more rounds; want none", again.Taken, len(rx.rounds)-4)
	}
}
