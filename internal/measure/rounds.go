package measure

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/store"
)

// RoundExecutor is an [Executor] that takes whole rounds rather than single
// runs: a fleet sends each round to one benchmark machine as one queue job,
// so that the runs of a round, which the statistics pair, are taken back to
// back on one machine. [Measure] hands it every round of a pass at once, in
// planned order; the executor may take rounds concurrently (on several
// machines, or queued on one), but takes the tasks of one round in order,
// on one machine, with nothing else measured there in between.
//
// Each round's tasks are what [Executor.Execute] would get, except that
// LogDir is "" (the machine that takes the run keeps its logs; its record
// says where) and that the first round of a pass starts with the job's
// warm-up tasks (Task.Warmup). done is called once per round, with the
// records of its measured tasks in order, as each round finishes; Measure
// stores them (PutRun is an upsert: a remote executor that stored them
// already, so that nothing measured is lost if the caller dies, loses
// nothing by it). done may be called from several goroutines.
//
// A RoundExecutor runs elsewhere: Measure neither takes this machine's
// measuring lock nor checks the job's programs here for it; the machines
// that take the rounds do (CheckPrograms).
type RoundExecutor interface {
	Executor
	ExecuteRounds(ctx context.Context, rounds [][]Task, done func(round int, recs []*store.RunRecord) error) error
}

// rounds cuts a plan into rounds: consecutive slots in which no target
// repeats. With whole rounds these are exactly the planned rounds; with
// [Spread] they are the stretches in which the targets run side by side.
func (m *measurement) roundsOf(plan []slot) [][]slot {
	var out [][]slot
	var cur []slot
	for _, sl := range plan {
		if slices.ContainsFunc(cur, func(c slot) bool { return c.target == sl.target }) {
			out = append(out, cur)
			cur = nil
		}
		cur = append(cur, sl)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// task is the measured task of a slot.
func (m *measurement) task(sl slot, logDir string) Task {
	t := m.out.Targets[sl.target]
	key := store.RunKey{Job: m.j.Key(), Commit: t.Target.Commit.Hash, Variant: VariantID(t.Target.Variant), Index: sl.index}
	return Task{Job: m.j, Key: key, Variant: t.Target.Variant, Build: t.Build, Session: m.out.Session, LogDir: logDir}
}

// warmupTasks are the job's warm-up runs of the targets in plan,
// interleaved (see [Warmup]).
func (m *measurement) warmupTasks(plan []slot) []Task {
	if m.j.Warmup <= 0 {
		return nil
	}
	var need []int
	for _, sl := range plan {
		if !slices.Contains(need, sl.target) {
			need = append(need, sl.target)
		}
	}
	slices.Sort(need)
	var tasks []Task
	for _, w := range Warmup(len(need), m.j.Warmup) {
		t := m.out.Targets[need[w.Commit]]
		tasks = append(tasks, Task{Job: m.j, Key: store.RunKey{Job: m.j.Key(), Commit: t.Target.Commit.Hash, Variant: VariantID(t.Target.Variant)},
			Variant: t.Target.Variant, Build: t.Build, Session: m.out.Session, Warmup: true})
	}
	return tasks
}

// takeRounds takes a pass through a RoundExecutor: every round at once,
// the warm-ups at the head of the first, each round's records stored as
// the round finishes.
func (m *measurement) takeRounds(ctx context.Context, rx RoundExecutor, plan []slot, warm bool) error {
	m.planned += len(plan)
	m.last = plan
	slotsOf := m.roundsOf(plan)
	rounds := make([][]Task, len(slotsOf))
	for i, rs := range slotsOf {
		if i == 0 && warm {
			rounds[i] = m.warmupTasks(plan)
		}
		for _, sl := range rs {
			rounds[i] = append(rounds[i], m.task(sl, ""))
		}
	}
	var mu sync.Mutex
	return rx.ExecuteRounds(ctx, rounds, func(i int, recs []*store.RunRecord) error {
		mu.Lock()
		defer mu.Unlock()
		if i < 0 || i >= len(slotsOf) || len(recs) != len(slotsOf[i]) {
			return fmt.Errorf("round executor: round %d has %d records, want %d", i, len(recs), len(slotsOf[i]))
		}
		for k, rec := range recs {
			sl := slotsOf[i][k]
			want := m.task(sl, "").Key
			if rec.RunKey != want {
				return fmt.Errorf("round executor: round %d gave run %s where %s was planned", i, rec.RunKey, want)
			}
			rec.Session = m.out.Session
			if err := m.opt.Store.PutRun(ctx, rec); err != nil {
				return fmt.Errorf("storing run %d of %s: %w", want.Index, gitrev.Short(want.Commit), err)
			}
			m.out.Taken++
			m.progress.Ran(m.out.Taken, m.planned, m.out.Targets[sl.target].Target, rec)
		}
		return nil
	})
}

// logDir makes the folder for a run's logs (see [RunLogDir]).
func (m *measurement) logDir(key store.RunKey) (string, error) { return RunLogDir(m.opt.Store, key) }

// RunLogDir makes the folder for the logs of run key in st's result tree
// ([store.Store.RunDir]), keeping an earlier attempt's (failed, or in
// flight when perfbot was killed) beside it.
func RunLogDir(st *store.Store, key store.RunKey) (string, error) {
	dir := st.RunDir(key)
	if _, err := os.Stat(dir); err == nil {
		if err := os.Rename(dir, fmt.Sprintf("%s.attempt-%d", dir, time.Now().UnixNano())); err != nil {
			return "", err
		}
	}
	return dir, os.MkdirAll(dir, 0o755)
}
