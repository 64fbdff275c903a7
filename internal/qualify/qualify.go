package qualify

import (
	"context"
	"fmt"
	"github.com/perfbot/perfbot/internal/gate"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// Run qualifies this runner for cfg.Job: it builds the revision (and the
// planted slowdown's variant), measures them in interleaved rounds of
// fresh runs, batch after batch, until MaxRuns or the time budget, then
// resamples the runs into A/A gates and planted shifts, and records the
// qualification in the store. A build that fails is an error; the runs of
// a measurement cut short by the budget are kept and used.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	env, j := cfg.Env, cfg.Job
	res := &Result{Job: j.Name, JobKey: j.Key(), Runner: ThisRunner(), Alpha: cfg.alpha(), Started: time.Now(), LoadStart: loadAverage()}
	c, err := env.Repo.Resolve(ctx, cfg.rev())
	if err != nil {
		return nil, err
	}
	res.Commit = c
	res.Seed = cfg.Seed
	if res.Seed == 0 {
		res.Seed = measure.SeedOf("qualify", j.Key(), c.Hash)
	}
	deadline := res.Started.Add(cfg.maxTime())
	if res.CPU, err = env.Pin(ctx, j, cfg.maxRuns(), cfg.threshold()); err != nil {
		return nil, err
	}
	targets, builder, slowName, err := cfg.targets(c)
	if err != nil {
		return nil, err
	}
	from, err := storedMax(ctx, env.Store, j, targets)
	if err != nil {
		return nil, err
	}
	perRound, err := cfg.measure(ctx, deadline, targets, builder, from, res)
	if err != nil {
		return nil, err
	}
	plain, failed, err := okRuns(ctx, env.Store, j, targets[0], from)
	if err != nil {
		return nil, err
	}
	res.Failed = failed
	rules, err := rulesOf(j, plain)
	if err != nil {
		return nil, err
	}
	pairTime := 2 * perRound / time.Duration(len(targets))
	res.BudgetPairs, res.Budget = budgetPairs(cfg.gatePairs(), cfg.gateMaxTime(), pairTime)
	in := inputs{rules: rules, budget: res.BudgetPairs, planned: cfg.gatePairs(), gates: cfg.gates(), rng: rand.New(rand.NewSource(res.Seed))}
	aa := plain
	if len(targets) > 1 {
		slow, _, err := okRuns(ctx, env.Store, j, targets[1], from)
		if err != nil {
			return nil, err
		}
		in.rounds = roundsOf(plain, slow, rules)
		in.slowName = slowName
		aa = byPosition(plain, slow)
	}
	in.plain = valuesOf(aa, rules)
	res.Runs = len(valuesOf(plain, rules))
	if err := in.analyse(res); err != nil {
		return nil, err
	}
	res.Finished, res.LoadEnd = time.Now(), loadAverage()
	res.Advice = advice(res, cfg)
	if err := env.Store.PutQualification(ctx, res.Record()); err != nil {
		return nil, err
	}
	return res, nil
}

func (c Config) threshold() float64 {
	if c.Job.Gate.ThresholdPct > 0 {
		return c.Job.Gate.ThresholdPct
	}
	return gate.DefaultThresholdPct
}

// targets are the plain build and, when the job names one, the planted
// slowdown: its variant, or the plain build run with the slowdown's
// environment (the builder then hands it the plain build: the same bytes).
func (c Config) targets(commit gitrev.Commit) ([]measure.Target, measure.Builder, string, error) {
	ts := []measure.Target{{Commit: commit}}
	s := c.Job.Qualify.Slowdown
	if s == nil {
		return ts, c.Env.Builder, "", nil
	}
	if s.Variant != "" {
		v, ok := c.Job.Variant(s.Variant)
		if !ok {
			return nil, nil, "", fmt.Errorf("%s: qualify.slowdown.variant: the job declares no variant %q", c.Job.File, s.Variant)
		}
		return append(ts, measure.Target{Commit: commit, Variant: v}), c.Env.Builder, s.Variant, nil
	}
	var kv []string
	for k, v := range s.Env {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	v := job.Variant{Name: "qualify-slowdown", Env: s.Env}
	return append(ts, measure.Target{Commit: commit, Variant: v}), sameBuild{c.Env.Builder, v.Name}, strings.Join(kv, " "), nil
}

// sameBuild builds the run-environment slowdown as the plain build.
type sameBuild struct {
	measure.Builder
	variant string
}

func (b sameBuild) Build(ctx context.Context, j *job.Job, c gitrev.Commit, v job.Variant) (*build.Result, error) {
	if v.Name == b.variant {
		v = job.Variant{}
	}
	return b.Builder.Build(ctx, j, c, v)
}

// storedMax is the highest run number stored of any target: the
// qualification takes fresh runs above it.
func storedMax(ctx context.Context, st *store.Store, j *job.Job, ts []measure.Target) (int, error) {
	n := 0
	for _, t := range ts {
		rs, err := st.RunsWithoutValues(ctx, j.Key(), t.Commit.Hash, measure.VariantID(t.Variant))
		if err != nil {
			return 0, err
		}
		for _, r := range rs {
			n = max(n, r.Index)
		}
	}
	return n, nil
}

// measure takes rounds of fresh runs in batches: first the gate's first
// look's worth of pairs, then doubling while the time left fits the next
// batch at the pace measured so far. It returns the wall time of a round.
func (c Config) measure(ctx context.Context, deadline time.Time, ts []measure.Target, b measure.Builder, from int, res *Result) (time.Duration, error) {
	bctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	opt := c.Env.Options(res.CPU)
	opt.Builder, opt.Retry = b, true
	opt.Rand = rand.New(rand.NewSource(res.Seed))
	done, n := 0, 2*MinPairs
	var perRound time.Duration
	for n > 0 {
		batch := slices.Clone(ts)
		for i := range batch {
			batch[i].From, batch[i].Runs = from+done, from+done+n
		}
		t0 := time.Now()
		out, err := measure.Measure(bctx, c.Job, batch, opt)
		if err != nil {
			if ctx.Err() == nil && bctx.Err() != nil {
				res.TimeUp = true
				break
			}
			return 0, err
		}
		if err := out.BuildErrors(); err != nil {
			return 0, err
		}
		took := time.Since(t0)
		for _, t := range out.Targets {
			if t.Build != nil && !t.Build.Cached && t.Build.Record != nil {
				took -= t.Build.Record.Duration
			}
		}
		done += n
		perRound = max(took/time.Duration(n), time.Millisecond)
		left := time.Until(deadline)
		fit := int(float64(left) * 0.9 / float64(perRound))
		n = min(done, c.maxRuns()-done, fit)
		if n < 2 {
			res.TimeUp = res.TimeUp || c.maxRuns()-done >= 2
			break
		}
	}
	if perRound == 0 {
		perRound = time.Until(deadline) // nothing finished: the budget was too small
	}
	return perRound, nil
}

// okRuns are a target's OK runs above from, in run order, and the number
// of its failed runs above from.
func okRuns(ctx context.Context, st *store.Store, j *job.Job, t measure.Target, from int) ([]store.RunRecord, int, error) {
	rs, err := st.Runs(ctx, j.Key(), t.Commit.Hash, measure.VariantID(t.Variant))
	if err != nil {
		return nil, 0, err
	}
	var ok []store.RunRecord
	failed := 0
	for _, r := range rs {
		switch {
		case r.Index <= from:
		case r.Status == store.RunOK:
			ok = append(ok, r)
		default:
			failed++
		}
	}
	return ok, failed, nil
}

// budgetPairs is the gate's budget in pairs: gate.max_runs, or fewer when
// gate.max_time does not fit them at this runner's pace.
func budgetPairs(maxPairs int, maxTime, pairTime time.Duration) (int, string) {
	if pairTime <= 0 {
		return maxPairs, fmt.Sprintf("gate.max_runs %d", maxPairs)
	}
	fit := int(maxTime / pairTime)
	if fit >= maxPairs {
		return maxPairs, fmt.Sprintf("gate.max_runs %d (gate.max_time %s fits %d pairs at %s a pair)", maxPairs, maxTime, fit, pairTime.Round(time.Millisecond))
	}
	n := max(fit, MinPairs)
	return n, fmt.Sprintf("%d pairs: gate.max_time %s at %s a pair (gate.max_runs %d)", n, maxTime, pairTime.Round(time.Millisecond), maxPairs)
}

// byPosition orders the plain runs for A/A pairing when slowed runs were
// taken beside them: the runs taken first in their round, then those taken
// second (by start time against the slowed run of the same round), each
// group in run order and even in length, so that a pair's two runs held
// the same place in their rounds and no position effect reads as a change.
func byPosition(plain, slow []store.RunRecord) []store.RunRecord {
	type key struct {
		idx     int
		session string
	}
	started := map[key]time.Time{}
	for _, r := range slow {
		started[key{r.Index, r.Session}] = r.Started
	}
	var first, second []store.RunRecord
	for _, r := range plain {
		if s, ok := started[key{r.Index, r.Session}]; ok && s.Before(r.Started) {
			second = append(second, r)
		} else {
			first = append(first, r)
		}
	}
	first = first[:len(first)/2*2]
	return append(first, second...)
}
