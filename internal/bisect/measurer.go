package bisect

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	runner "github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
)

// StoreMeasurer is the real [Measurer]: it builds each commit under each
// of Variants (cached by package build), takes the missing runs with
// [measure.RunOnce], interleaved as [Plan] orders them and pinned to CPU,
// and commits every run to Store as it finishes. It implements
// [Prefetcher] by building in a goroutine whose builds are confined to
// the CPUs other than CPU.
type StoreMeasurer struct {
	Job     *job.Job
	Store   *store.Store
	Builder *build.Builder
	Repo    *gitrev.Repo
	Metric  string
	// Variants are the layouts every commit is measured under: one for
	// the plain build ({}) or forced alignment, several for a sweep.
	Variants []job.Variant
	CPU      int        // pin runs to this CPU; -1 for none
	Rand     *rand.Rand // run order; nil for a source seeded from the job
	Progress measure.Progress
	Log      func(string)

	once    sync.Once
	buildMu sync.Mutex // one build at a time: git worktree commands do not mix
	mu      sync.Mutex // guards the fields below
	pending map[string]chan struct{}
	built   int
	bg      sync.WaitGroup
}

func (m *StoreMeasurer) init() {
	m.once.Do(func() {
		m.pending = map[string]chan struct{}{}
		if len(m.Variants) == 0 {
			m.Variants = []job.Variant{{}}
		}
		if m.Rand == nil {
			m.Rand = rand.New(rand.NewSource(runSeed(m.Job)))
		}
	})
}

// runSeed is the default seed of a job's run order: the FNV-1a hash of
// its key, so that jobs get different orders and a job always the same.
func runSeed(j *job.Job) int64 {
	h := fnv.New64a()
	h.Write([]byte("bisect\x00" + j.Key()))
	return int64(h.Sum64())
}

// Layouts returns the number of variants.
func (m *StoreMeasurer) Layouts() int {
	m.init()
	return len(m.Variants)
}

type target struct {
	commit  gitrev.Commit
	variant job.Variant
}

func (t target) key() string { return t.commit.Hash + "\x00" + measure.VariantID(t.variant) }

func (t target) mt() measure.Target { return measure.Target{Commit: t.commit, Variant: t.variant} }

// build builds t, waiting for a background build of it first.
func (m *StoreMeasurer) build(ctx context.Context, t target) (*build.Result, error) {
	m.mu.Lock()
	ch := m.pending[t.key()]
	m.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	m.buildMu.Lock()
	defer m.buildMu.Unlock()
	res, err := m.Builder.Build(ctx, m.Job, t.commit, t.variant)
	if res != nil && !res.Cached {
		m.mu.Lock()
		m.built++
		m.mu.Unlock()
	}
	return res, err
}

// Prefetch builds commits (under every variant) in the background, on
// the CPUs runs are not pinned to. Builds already cached cost nothing.
func (m *StoreMeasurer) Prefetch(ctx context.Context, commits []gitrev.Commit) {
	m.init()
	var ts []target
	m.mu.Lock()
	for _, c := range commits {
		for _, v := range m.Variants {
			t := target{c, v}
			if _, ok := m.pending[t.key()]; !ok {
				m.pending[t.key()] = make(chan struct{})
				ts = append(ts, t)
			}
		}
	}
	m.mu.Unlock()
	if len(ts) == 0 {
		return
	}
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		// The thread dies with the goroutine (it stays locked), so its
		// narrowed affinity never leaks to other goroutines.
		runtime.LockOSThread()
		m.confine()
		for _, t := range ts {
			m.buildMu.Lock()
			res, err := m.Builder.Build(ctx, m.Job, t.commit, t.variant)
			m.buildMu.Unlock()
			m.mu.Lock()
			if res != nil && !res.Cached {
				m.built++
			}
			close(m.pending[t.key()])
			m.mu.Unlock()
			if err != nil && !errors.Is(err, build.ErrFailed) && ctx.Err() == nil && m.Log != nil {
				m.Log(fmt.Sprintf("speculative build of %s: %v", t.mt(), err))
			}
		}
	}()
}

// confine narrows the calling thread's affinity to the CPUs other than the
// one runs are pinned to, so that builds started from it do not disturb
// the runs.
func (m *StoreMeasurer) confine() {
	if m.CPU < 0 {
		return
	}
	var set unix.CPUSet
	for _, c := range runner.Allowed() {
		if c != m.CPU {
			set.Set(c)
		}
	}
	if set.Count() > 0 {
		_ = unix.SchedSetaffinity(0, &set)
	}
}

// Wait waits for the background builds to finish.
func (m *StoreMeasurer) Wait() { m.bg.Wait() }

// IsMerge reports whether c has more than one parent.
func (m *StoreMeasurer) IsMerge(ctx context.Context, c gitrev.Commit) (bool, error) {
	if m.Repo == nil {
		return false, nil
	}
	_, err := m.Repo.Resolve(ctx, c.Hash+"^2")
	if errors.Is(err, gitrev.ErrUnknownRevision) {
		return false, nil
	}
	return err == nil, err
}

// Measure builds the requested commits under every variant and takes the
// missing runs, interleaved.
func (m *StoreMeasurer) Measure(ctx context.Context, reqs []Request) (*Batch, error) {
	m.init()
	batch := &Batch{}
	jk := m.Job.Key()
	type slotTarget struct {
		target
		res     *build.Result
		req     int
		missing []int // run numbers to take
	}
	var ts []*slotTarget
	buildErr := make([]error, len(reqs))
	n := len(reqs) * len(m.Variants)
	for i, r := range reqs {
		for _, v := range m.Variants {
			t := &slotTarget{target: target{r.Commit, v}, req: i}
			ts = append(ts, t)
			if buildErr[i] != nil {
				continue // one failed layout skips the commit
			}
			if m.Progress != nil {
				m.Progress.Building(len(ts)-1, n, t.mt())
			}
			res, err := m.build(ctx, t.target)
			if m.Progress != nil {
				m.Progress.Built(len(ts)-1, n, t.mt(), res, err)
			}
			if err != nil {
				if !errors.Is(err, build.ErrFailed) {
					return m.finish(batch), err
				}
				buildErr[i] = err
				continue
			}
			t.res = res
			recs, err := m.Store.RunsWithoutValues(ctx, jk, r.Commit.Hash, measure.VariantID(v))
			if err != nil {
				return m.finish(batch), err
			}
			have := map[int]bool{}
			for _, rec := range recs {
				have[rec.Index] = true
			}
			for idx := 1; idx <= r.Runs; idx++ {
				if !have[idx] {
					t.missing = append(t.missing, idx)
				}
			}
		}
	}

	// Interleaved: every target's runs spread evenly over the batch.
	var active []*slotTarget
	var counts []int
	for _, t := range ts {
		if buildErr[t.req] == nil && len(t.missing) > 0 {
			active = append(active, t)
			counts = append(counts, len(t.missing))
		}
	}
	var plan []*slotTarget
	var idx []int
	next := make([]int, len(active))
	for _, i := range Plan(counts, m.Rand) {
		plan = append(plan, active[i])
		idx = append(idx, active[i].missing[next[i]])
		next[i]++
	}
	if m.Job.Warmup > 0 && len(plan) > 0 {
		if err := m.warmup(ctx, plan[0].target, plan[0].res); err != nil {
			return m.finish(batch), err
		}
	}
	for k, t := range plan {
		key := store.RunKey{Job: jk, Commit: t.commit.Hash, Variant: measure.VariantID(t.variant), Index: idx[k]}
		rec, err := measure.RunOnce(ctx, m.Job, key, t.variant, t.res.Worktree, m.CPU, m.Store)
		if err != nil {
			return m.finish(batch), err
		}
		batch.Taken++
		if m.Progress != nil {
			m.Progress.Ran(k+1, len(plan), t.mt(), rec)
		}
	}

	// What is stored now.
	infos, err := m.Store.Metrics(ctx, jk)
	if err != nil {
		return m.finish(batch), err
	}
	known := false
	for _, mi := range infos {
		if mi.Name == m.Metric {
			known = true
			batch.Better = mi.Better
		}
	}
	for i, r := range reqs {
		s := Samples{BuildErr: buildErr[i]}
		ok := 0
		if s.BuildErr == nil {
			for _, v := range m.Variants {
				runs, n, err := m.stored(ctx, r.Commit.Hash, v, known)
				if err != nil {
					return m.finish(batch), err
				}
				s.Layouts = append(s.Layouts, runs)
				ok += n
			}
		}
		batch.Samples = append(batch.Samples, s)
		// A job that runs fine but never prints the metric.
		if !known && ok > 0 {
			var names []string
			for _, mi := range infos {
				names = append(names, mi.Name)
			}
			return m.finish(batch), fmt.Errorf("%w: job %s produces no metric %q; its runs produce: %s", ErrNoMetric, m.Job.Name, m.Metric, strings.Join(names, ", "))
		}
	}
	return m.finish(batch), nil
}

// ErrNoMetric is returned when the job's runs do not produce the bisected
// metric.
var ErrNoMetric = errors.New("no such metric")

func (m *StoreMeasurer) finish(b *Batch) *Batch {
	m.mu.Lock()
	b.Built, m.built = m.built, 0
	m.mu.Unlock()
	return b
}

// stored returns the runs of commit under v, with the metric's value (the
// median of the run's values) for the OK ones, and the number of runs
// whose status is OK (with or without the metric).
func (m *StoreMeasurer) stored(ctx context.Context, commit string, v job.Variant, known bool) ([]Value, int, error) {
	jk, vid := m.Job.Key(), measure.VariantID(v)
	recs, err := m.Store.RunsWithoutValues(ctx, jk, commit, vid)
	if err != nil {
		return nil, 0, err
	}
	byRun := map[int][]float64{}
	if known {
		ss, err := m.Store.Samples(ctx, jk, []string{commit}, vid)
		if err != nil {
			return nil, 0, err
		}
		for _, s := range ss[commit][m.Metric] {
			byRun[s.Run] = append(byRun[s.Run], s.Value)
		}
	}
	out := make([]Value, 0, len(recs))
	statusOK := 0
	for _, r := range recs {
		val := Value{Index: r.Index}
		if r.Status == store.RunOK {
			statusOK++
		}
		switch xs := byRun[r.Index]; {
		case r.Status != store.RunOK:
			val.Reason = string(r.Status)
			if r.Reason != "" {
				val.Reason += ": " + r.Reason
			}
		case len(xs) == 0:
			val.Reason = fmt.Sprintf("no value of %s", m.Metric)
		default:
			sort.Float64s(xs)
			val.OK, val.Value = true, xs[len(xs)/2]
			if len(xs)%2 == 0 {
				val.Value = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
			}
		}
		out = append(out, val)
	}
	return out, statusOK, nil
}

// warmup runs the benchmark Job.Warmup times without storing anything.
func (m *StoreMeasurer) warmup(ctx context.Context, t target, res *build.Result) error {
	dir := filepath.Join(m.Store.Dir(), "warmup", "bisect")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for range m.Job.Warmup {
		_, err := runner.Exec(ctx, runner.Spec{
			Command:    m.Job.Run.Command,
			Dir:        res.Worktree,
			Env:        build.Env(m.Job, t.commit.Hash, t.variant, m.Job.Run.Env),
			Timeout:    m.Job.Run.Timeout,
			CPU:        m.CPU,
			StdoutPath: filepath.Join(dir, "stdout"),
			StderrPath: filepath.Join(dir, "stderr"),
		})
		if err != nil {
			return fmt.Errorf("warm-up run of %s: %w", t.mt(), err)
		}
	}
	return nil
}

// MetricOf resolves a metric name against job j: the name runs store it
// under (builtins by their lkp names: "wall" is "time.elapsed_time"), its
// direction as the job file declares it, and whether the job can produce
// it at all: false when no metric spec can. Families (Go benchmarks,
// regexes with a name group) may produce any name; their direction is 0,
// to be read from the first runs.
func MetricOf(j *job.Job, name string) (stored string, better metric.Better, ok bool) {
	for _, s := range j.Metrics {
		if s.Name == name && s.Kind != metric.KindGoBench {
			if s.Better == 0 {
				s.Better = metric.LowerIsBetter
			}
			return name, s.Better, true
		}
	}
	if c, ok := metric.CanonicalBuiltin(name); ok {
		return c, metric.LowerIsBetter, true
	}
	for _, s := range j.Metrics {
		if s.Kind == metric.KindGoBench || (s.Kind == metric.KindRegex && strings.Contains(s.Pattern, "?P<name>")) {
			return name, 0, true
		}
	}
	return name, 0, false
}
