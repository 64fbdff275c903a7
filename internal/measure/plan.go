package measure

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
)

// measurement is the state of one Measure call.
type measurement struct {
	j        *job.Job
	opt      Options
	out      *Outcome
	runs     int
	rng      *rand.Rand
	order    Order
	exec     Executor
	progress Progress
	planned  int          // runs planned so far, over every pass
	last     []slot       // the runs of the latest pass
	ours     map[int]bool // with WholeRounds: the rounds this measurement took
	instr    []float64    // by target: its callgrind instruction count (nil: not counted by callgrind)
}

// slot is one run to take: a target (index into the targets) and a run
// number.
type slot struct{ target, index int }

func newMeasurement(j *job.Job, targets []Target, opt Options) *measurement {
	m := &measurement{j: j, opt: opt, runs: opt.Runs, rng: opt.Rand, order: opt.Order, exec: opt.Executor,
		progress: opt.Progress, ours: map[int]bool{},
		out: &Outcome{Targets: make([]TargetOutcome, len(targets)), Session: newSession(), st: opt.Store, jobKey: j.Key(), whole: opt.WholeRounds}}
	if m.runs <= 0 {
		m.runs = j.Runs
	}
	if m.rng == nil {
		m.rng = rand.New(rand.NewSource(SeedOf("measure", j.Key())))
	}
	if m.order == nil {
		m.order = Balanced
	}
	if m.exec == nil {
		m.exec = Local{CPU: opt.CPU}
	}
	if m.progress == nil {
		m.progress = nopProgress{}
	}
	for i, t := range targets {
		m.out.Targets[i].Target = t
	}
	return m
}

// inStore is what the store holds of the buildable targets.
type inStore struct {
	byTarget []map[int]store.RunRecord // by run number; nil for unbuilt targets
	maxIndex int
}

// records returns target i's stored runs in run-number order.
func (s *inStore) records(i int) []store.RunRecord {
	var out []store.RunRecord
	for _, r := range s.byTarget[i] {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b store.RunRecord) int { return a.Index - b.Index })
	return out
}

func (m *measurement) load(ctx context.Context) (*inStore, error) {
	s := &inStore{byTarget: make([]map[int]store.RunRecord, len(m.out.Targets))}
	for i, t := range m.out.Targets {
		if t.Build == nil {
			continue
		}
		recs, err := m.opt.Store.RunsWithoutValues(ctx, m.j.Key(), t.Target.Commit.Hash, VariantID(t.Target.Variant))
		if err != nil {
			return nil, err
		}
		s.byTarget[i] = make(map[int]store.RunRecord, len(recs))
		for _, r := range recs {
			s.byTarget[i][r.Index] = r
			s.maxIndex = max(s.maxIndex, r.Index)
		}
	}
	return s, nil
}

// plan lists the runs still to take, in the order to take them.
// With a [Reserver] the run numbers are claimed for this measurement's
// session first.
func (m *measurement) plan(ctx context.Context, s *inStore) ([]slot, error) {
	var active []int    // targets with runs to take
	var missing [][]int // their run numbers to take, in order
	if m.opt.WholeRounds {
		need := m.runs - len(m.complete(s))
		if need <= 0 {
			return nil, nil
		}
		for i, t := range m.out.Targets {
			if t.Build != nil {
				active = append(active, i)
			}
		}
		idx, err := m.roundNumbers(ctx, s, active, need)
		if err != nil {
			return nil, err
		}
		for _, r := range idx {
			m.ours[r] = true
		}
		for range active {
			missing = append(missing, idx)
		}
	} else {
		for i, t := range m.out.Targets {
			if t.Build == nil {
				continue
			}
			want := t.Target.Runs
			if want == 0 {
				want = m.runs
			}
			var idx []int
			for r := t.Target.From + 1; r <= want; r++ {
				rec, ok := s.byTarget[i][r]
				if !ok || (rec.Status != store.RunOK && !m.opt.KeepFailed) {
					idx = append(idx, r)
				}
			}
			if len(idx) > 0 {
				active = append(active, i)
				missing = append(missing, idx)
			}
		}
		var err error
		if active, missing, err = m.claim(ctx, s, active, missing); err != nil {
			return nil, err
		}
	}
	counts := make([]int, len(active))
	for k, idx := range missing {
		counts[k] = len(idx)
	}
	next := make([]int, len(active))
	var plan []slot
	for _, k := range m.order(counts, m.rng) {
		plan = append(plan, slot{target: active[k], index: missing[k][next[k]]})
		next[k]++
	}
	return plan, nil
}

// retry reports whether the failures of the latest pass are worth another
// pass: not when some target failed every run it took in the pass (it is
// broken, not flaky: retaking costs runs and changes nothing).
func (m *measurement) retry(s *inStore) bool {
	ok := map[int]int{}
	failed := map[int]int{}
	for _, sl := range m.last {
		r, found := s.byTarget[sl.target][sl.index]
		switch {
		case !found:
		case r.Status == store.RunOK:
			ok[sl.target]++
		default:
			failed[sl.target]++
		}
	}
	if len(failed) == 0 {
		return false
	}
	for t := range failed {
		if ok[t] == 0 {
			return false
		}
	}
	return true
}

// complete lists, in order, the run numbers at which every buildable
// target has a successful run and all of them share one session.
func (m *measurement) complete(s *inStore) []int {
	first := -1
	for i, t := range m.out.Targets {
		if t.Build != nil {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	var rounds []int
	for idx, r0 := range s.byTarget[first] {
		ok := r0.Status == store.RunOK && r0.Session != ""
		for i, t := range m.out.Targets {
			if !ok || t.Build == nil {
				continue
			}
			r, found := s.byTarget[i][idx]
			ok = found && r.Status == store.RunOK && r.Session == r0.Session
		}
		if ok {
			rounds = append(rounds, idx)
		}
	}
	slices.Sort(rounds)
	return rounds
}

// rounds are the rounds to compare: the first Runs complete ones, topped up
// with this measurement's incomplete rounds so that failures show.
func (m *measurement) rounds(s *inStore) []int {
	rounds := m.complete(s)
	if len(rounds) >= m.runs {
		return rounds[:m.runs]
	}
	var ours []int
	for r := range m.ours {
		if !slices.Contains(rounds, r) {
			ours = append(ours, r)
		}
	}
	slices.Sort(ours)
	for _, r := range ours {
		if len(rounds) == m.runs {
			break
		}
		rounds = append(rounds, r)
	}
	slices.Sort(rounds)
	return rounds
}

// take takes the planned runs, storing each as it finishes.
func (m *measurement) take(ctx context.Context, plan []slot) error {
	m.planned += len(plan)
	m.last = plan
	for _, sl := range plan {
		t := m.out.Targets[sl.target]
		task := m.task(sl, "")
		dir, err := m.logDir(task.Key)
		if err != nil {
			return err
		}
		task.LogDir = dir
		rec, err := m.exec.Execute(ctx, task)
		if err != nil {
			return err
		}
		rec.RunKey, rec.Session = task.Key, m.out.Session
		m.withInstructions(sl.target, rec)
		if err := m.opt.Store.PutRun(ctx, rec); err != nil {
			return fmt.Errorf("storing run %d of %s: %w", task.Key.Index, gitrev.Short(task.Key.Commit), err)
		}
		m.out.Taken++
		m.progress.Ran(m.out.Taken, m.planned, t.Target, rec)
	}
	return nil
}

// warmup takes the job's warm-up runs, interleaved, of the targets that
// have runs in the plan; nothing of them is stored.
func (m *measurement) warmup(ctx context.Context, plan []slot) error {
	for _, t := range m.warmupTasks(plan) {
		t.LogDir = filepath.Join(m.opt.Store.Dir(), "warmup", gitrev.Short(t.Key.Commit)+"-"+t.Variant.Name)
		if err := os.MkdirAll(t.LogDir, 0o755); err != nil {
			return err
		}
		if _, err := m.exec.Execute(ctx, t); err != nil {
			return fmt.Errorf("warm-up run of %s: %w", Target{Commit: gitrev.Commit{Hash: t.Key.Commit}, Variant: t.Variant}, err)
		}
	}
	return nil
}

type nopProgress struct{}

func (nopProgress) Building(int, int, Target)                    {}
func (nopProgress) Built(int, int, Target, *build.Result, error) {}
func (nopProgress) Ran(int, int, Target, *store.RunRecord)       {}
