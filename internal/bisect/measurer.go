package bisect

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/compare/stored"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	runner "github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
)

// StoreMeasurer is the real [Measurer], a thin adapter of package measure:
// it builds each commit under each of Variants (cached by package build),
// takes the missing runs interleaved as [measure.Spread] orders them and
// pinned to CPU, and commits every run to Store as it finishes. It implements
// [Prefetcher] by building in a goroutine whose builds are confined to
// the CPUs other than CPU.
type StoreMeasurer struct {
	Job   *job.Job
	Store *store.Store
	// Builder builds the commits: a *build.Builder here, or a fleet's
	// builder that queues the builds on its machines.
	Builder measure.Builder
	// Executor takes the runs (nil: measure.Local pinned to CPU); a
	// fleet's takes them on its machines.
	Executor measure.Executor
	Repo     *gitrev.Repo
	Metric   string
	// Variants are the layouts every commit is measured under: one for
	// the plain build ({}) or forced alignment, several for a sweep.
	Variants []job.Variant
	CPU      int        // pin runs to this CPU; -1 for none
	Rand     *rand.Rand // run order; nil for a source seeded from the job
	Progress measure.Progress
	Log      func(string)

	once    sync.Once
	buildMu sync.Mutex // one local build at a time: git worktree commands do not mix
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
			m.Rand = rand.New(rand.NewSource(measure.SeedOf("bisect", m.Job.Key())))
		}
	})
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
	defer m.lockBuild()()
	res, err := m.Builder.Build(ctx, m.Job, t.commit, t.variant)
	if res != nil && !res.Cached {
		m.mu.Lock()
		m.built++
		m.mu.Unlock()
	}
	return res, err
}

// lockBuild takes the build lock for a local *build.Builder (its git
// worktree commands do not mix) and returns its release. Any other
// builder (a fleet's, which queues each build on a machine of its own) is
// called concurrently: a k-ary look's K candidates are built at once.
func (m *StoreMeasurer) lockBuild() func() {
	if _, local := m.Builder.(*build.Builder); !local {
		return func() {}
	}
	m.buildMu.Lock()
	return m.buildMu.Unlock
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
			unlock := m.lockBuild()
			res, err := m.Builder.Build(ctx, m.Job, t.commit, t.variant)
			unlock()
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
// missing runs through the one measuring path (package measure): every
// target's runs spread over one session ([measure.Spread]).
func (m *StoreMeasurer) Measure(ctx context.Context, reqs []Request) (*Batch, error) {
	return m.measureWith(ctx, m.Executor, reqs)
}

// Pinner is an Executor that can keep measurements on one machine: On
// returns an executor whose measurements all go to the machine it keeps
// for key (a fleet's: the machine of key's earlier rounds, while it lives).
type Pinner interface {
	On(key string) measure.Executor
}

// MeasureOn is Measure on the machine kept for key, when the Executor is
// a [Pinner]; else Measure.
func (m *StoreMeasurer) MeasureOn(ctx context.Context, key string, reqs []Request) (*Batch, error) {
	if p, ok := m.Executor.(Pinner); ok {
		return m.measureWith(ctx, p.On(key), reqs)
	}
	return m.Measure(ctx, reqs)
}

func (m *StoreMeasurer) measureWith(ctx context.Context, exec measure.Executor, reqs []Request) (*Batch, error) {
	m.init()
	batch := &Batch{}
	// One target per commit: a look may ask for one commit twice (the
	// culprit of a check that did not confirm is also its range's bad
	// end); it is measured once, with the most runs asked for.
	uniq, reqOf := mergeRequests(reqs)
	var targets []measure.Target
	for _, r := range uniq {
		for _, v := range m.Variants {
			runs := r.Runs
			if runs <= 0 {
				runs = -1 // only built and read
			}
			targets = append(targets, measure.Target{Commit: r.Commit, Variant: v, Runs: runs, From: r.From})
		}
	}
	// A source of the call's own, seeded from m.Rand: a k-ary search's
	// looks call this concurrently, and a rand.Rand is not safe for that.
	m.mu.Lock()
	rng := rand.New(rand.NewSource(m.Rand.Int63()))
	m.mu.Unlock()
	out, err := measure.Measure(ctx, m.Job, targets, measure.Options{
		Store: m.Store, Builder: &layoutBuilder{m: m, failed: map[string]error{}}, CPU: m.CPU, Executor: exec,
		Order: measure.Spread, Rand: rng, Progress: m.Progress, Wait: m.wait,
	})
	if out != nil {
		batch.Taken = out.Taken
	}
	if err != nil {
		return m.finish(batch), err
	}
	uniqErr := make([]error, len(uniq))
	for k, t := range out.Targets {
		if i := k / len(m.Variants); uniqErr[i] == nil {
			uniqErr[i] = t.BuildErr
		}
	}
	buildErr := make([]error, len(reqs))
	for i := range reqs {
		buildErr[i] = uniqErr[reqOf[i]]
	}

	// What is stored now.
	jk := m.Job.Key()
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

// mergeRequests makes one request of those for one commit (the most runs,
// from the lowest run number), and says which merged request each of reqs
// became.
func mergeRequests(reqs []Request) (uniq []Request, reqOf []int) {
	at := map[string]int{}
	reqOf = make([]int, len(reqs))
	for i, r := range reqs {
		j, seen := at[r.Commit.Hash]
		if !seen {
			j = len(uniq)
			at[r.Commit.Hash] = j
			uniq = append(uniq, r)
		} else {
			u := &uniq[j]
			u.Runs = max(u.Runs, r.Runs)
			u.From = min(u.From, r.From)
		}
		reqOf[i] = j
	}
	return uniq, reqOf
}

// wait tells the log that another perfbot holds the machine.
func (m *StoreMeasurer) wait(holder string) {
	if m.Log != nil {
		m.Log("waiting for " + holder + " to finish measuring on this machine")
	}
}

// layoutBuilder builds for one Measure call: it waits for background
// builds, and once one layout of a commit fails to build it skips the
// commit's other layouts (bisect skips the commit anyway).
type layoutBuilder struct {
	m      *StoreMeasurer
	mu     sync.Mutex       // a fleet builds a measurement's targets at once
	failed map[string]error // by commit hash
}

func (b *layoutBuilder) Build(ctx context.Context, _ *job.Job, c gitrev.Commit, v job.Variant) (*build.Result, error) {
	b.mu.Lock()
	err := b.failed[c.Hash]
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	res, err := b.m.build(ctx, target{c, v})
	if errors.Is(err, build.ErrFailed) {
		b.mu.Lock()
		b.failed[c.Hash] = err
		b.mu.Unlock()
	}
	return res, err
}

// Parallel builds a measurement's targets at once when the measurer's
// builder does (a fleet's: measure.ParallelBuilder).
func (b *layoutBuilder) Parallel() bool {
	pb, ok := b.m.Builder.(measure.ParallelBuilder)
	return ok && pb.Parallel()
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

// stored returns the runs of commit under v, with the metric's figure
// (the median of the run's values, [compare.PerRun]) for the OK ones, and
// the number of runs whose status is OK (with or without the metric).
func (m *StoreMeasurer) stored(ctx context.Context, commit string, v job.Variant, known bool) ([]Value, int, error) {
	jk, vid := m.Job.Key(), measure.VariantID(v)
	recs, err := m.Store.RunsWithoutValues(ctx, jk, commit, vid)
	if err != nil {
		return nil, 0, err
	}
	byRun := map[int]float64{}
	if known {
		ss, err := m.Store.Samples(ctx, jk, []string{commit}, vid)
		if err != nil {
			return nil, 0, err
		}
		for _, rv := range compare.PerRun(stored.Runs(ss[commit][m.Metric])) {
			byRun[rv.Pair.Round] = rv.Value
		}
	}
	out := make([]Value, 0, len(recs))
	statusOK := 0
	for _, r := range recs {
		val := Value{Index: r.Index, Machine: r.Machine}
		if r.Status == store.RunOK {
			statusOK++
		}
		x, has := byRun[r.Index]
		switch {
		case r.Status != store.RunOK:
			val.Reason = string(r.Status)
			if r.Reason != "" {
				val.Reason += ": " + r.Reason
			}
		case !has:
			val.Reason = fmt.Sprintf("no value of %s", m.Metric)
		default:
			val.OK, val.Value = true, x
		}
		out = append(out, val)
	}
	return out, statusOK, nil
}
