package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// request is one call of the pipeline into the fleet: a build, or a
// measurement's rounds. order sorts the requests of one instant.
type request struct {
	order  string
	build  *buildState
	rounds *roundsReq
}

// buildState is one build key's build, queued once (as River's unique
// build jobs): later calls wait for it.
type buildState struct {
	key, commit, variant string
	done                 chan struct{}
	res                  *build.Result
	err                  error
}

type roundsReq struct {
	pin    string
	rounds []*roundState
}

// roundState is one round: its tasks, taken in order on one worker.
type roundState struct {
	tasks []measure.Task
	done  chan struct{}
	recs  []*store.RunRecord
}

// Builder is the fleet's measure.Builder: each build is queued once for
// any worker of the class.
func (f *Fleet) Builder() measure.Builder { return fleetBuilder{f} }

type fleetBuilder struct{ f *Fleet }

// Parallel: as the real fleet's builder (fleet.Remote), a measurement's
// targets are built at once, each on a free worker.
func (fleetBuilder) Parallel() bool { return true }

// Build queues the build of commit under v, or waits for the one queued
// before (then the result is Cached).
func (b fleetBuilder) Build(ctx context.Context, j *job.Job, c gitrev.Commit, v job.Variant) (*build.Result, error) {
	f := b.f
	key := build.Key(j, c.Hash, v)
	f.mu.Lock()
	st, cached := f.builds[key]
	if !cached {
		st = &buildState{key: key, commit: c.Hash, variant: v.Name, done: make(chan struct{})}
		f.builds[key] = st
	}
	f.mu.Unlock()
	if !cached {
		f.ask(&request{order: "build " + c.Hash + " " + measure.VariantID(v), build: st})
	}
	select {
	case <-st.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	res := *st.res
	res.Cached = cached
	return &res, st.err
}

// Executor is the fleet's measure executor: a measure.RoundExecutor whose
// measurements each go to one worker, a measure.Reserver, and a
// bisect.Pinner (On keeps a k-ary search's slot on one worker).
func (f *Fleet) Executor() measure.Executor { return &executor{f: f} }

type executor struct {
	f   *Fleet
	pin string // "" is each measurement's session
}

// On returns the executor whose measurements go to the worker kept for
// key.
func (e *executor) On(key string) measure.Executor { return &executor{f: e.f, pin: "on " + key} }

// Execute is not used: the fleet takes whole rounds.
func (e *executor) Execute(context.Context, measure.Task) (*store.RunRecord, error) {
	return nil, errors.New("sim: runs are taken in rounds (measure uses ExecuteRounds)")
}

// ExecuteRounds queues every round on one worker and hands each to done
// as it finishes, in order.
func (e *executor) ExecuteRounds(ctx context.Context, rounds [][]measure.Task, done func(int, []*store.RunRecord) error) error {
	if len(rounds) == 0 {
		return nil
	}
	pin := e.pin
	if pin == "" {
		pin = "session " + rounds[0][0].Session
	}
	req := &roundsReq{pin: pin}
	var keys []string
	for _, r := range rounds {
		req.rounds = append(req.rounds, &roundState{tasks: r, done: make(chan struct{})})
		for _, t := range r {
			keys = append(keys, fmt.Sprintf("%s %s %s %08d", t.Key.Job, t.Key.Commit, t.Key.Variant, t.Key.Index))
		}
	}
	slices.Sort(keys)
	order := "rounds " + strings.Join(keys, ",")
	if e.pin != "" {
		order = "rounds " + e.pin
	}
	e.f.ask(&request{order: order, rounds: req})
	for i, r := range req.rounds {
		select {
		case <-r.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := done(i, r.recs); err != nil {
			return err
		}
	}
	return nil
}

// Reserve claims run numbers as the fleet's database does: a run number
// is the session's that first claimed it, a group all or none.
func (e *executor) Reserve(_ context.Context, session string, groups [][]measure.Claim) ([]bool, error) {
	f := e.f
	f.mu.Lock()
	defer f.mu.Unlock()
	ok := make([]bool, len(groups))
	for g, cs := range groups {
		ok[g] = !slices.ContainsFunc(cs, func(c measure.Claim) bool {
			held, has := f.claims[c.Key]
			return has && held != session && held != c.Retake
		})
		if ok[g] {
			for _, c := range cs {
				f.claims[c.Key] = session
			}
		}
	}
	return ok, nil
}

// measured makes the records of a round that worker machine took from
// started on, and hands them to the pipeline.
func (f *Fleet) measured(r *roundState, machine string, started time.Time) {
	for k, t := range r.tasks {
		if t.Warmup {
			continue
		}
		rec := &store.RunRecord{RunKey: t.Key, Session: t.Session, Machine: machine, CPU: -1, Status: store.RunOK,
			Started: started.Add(time.Duration(k) * f.cfg.Run)}
		v := f.cfg.Truth.Figure(t.Key.Commit, t.Key.Variant, t.Key.Index, machine)
		rec.Values = []metric.Value{{Name: f.cfg.Metric, Unit: f.cfg.Unit, Better: metric.LowerIsBetter, Value: v}}
		r.recs = append(r.recs, rec)
	}
	close(r.done)
}

// built publishes a build's result.
func (f *Fleet) built(b *buildState, machine string, started time.Time, d time.Duration) {
	rec := &store.BuildRecord{Key: b.key, Commit: b.commit, Variant: b.variant, Status: store.BuildOK, Started: started, Duration: d}
	if f.cfg.Truth.Broken(b.commit) {
		rec.Status, rec.Error = store.BuildFailed, "the simulated history does not build here"
		b.err = fmt.Errorf("%w: %.12s (on %s): %s", build.ErrFailed, b.commit, machine, rec.Error)
	}
	b.res = &build.Result{Record: rec}
	close(b.done)
}
