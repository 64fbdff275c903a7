// A bisection in progress: its checkpointed State and the session that runs it.

package bisect

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
)

// Phase is how far a bisection got.
type Phase string

// Phases of a [State].
const (
	PhaseEnds   Phase = "ends"
	PhaseSteps  Phase = "steps"
	PhaseCheck  Phase = "check"
	PhaseRetest Phase = "retest"
	PhaseNext   Phase = "next" // a range's search ended: on to the next range
	PhaseTriage Phase = "triage"
	PhaseDone   Phase = "done"
)

// StateVersion is the version of the [State] encoding. Version 1 (one
// range, one culprit) is read and migrated (see migrateV1).
const StateVersion = 2

// State is a bisection in progress, as checkpointed. It is JSON-encodable.
type State struct {
	Version int   `json:"version"`
	Phase   Phase `json:"phase"`
	// Range is the index in Result.Ranges of the range being searched.
	Range int `json:"range"`
	// Lo and Hi bound the culprit's position on the range's path: it is
	// in (Lo, Hi]; Lo = -1 is the path's good commit.
	Lo, Hi int    `json:"-"`
	LoHi   [2]int `json:"lo_hi"`
	// CheckFrom holds the highest run number stored (under any layout)
	// of parent and culprit when the check began; the check's runs are
	// the ones after. (Before the run numbers of compare's whole rounds
	// could leave gaps it held the count, the same number without gaps.)
	CheckFrom [2]int `json:"check_from"`
	// Retests counts the re-tests after unconfirmed checks.
	Retests int `json:"retests"`
	// Used is the runs stored of every commit looked at, by hash.
	Used map[string]int `json:"used"`
	// Elapsed is the wall time of the earlier sessions (Result.Wall when
	// resumed).
	Elapsed time.Duration `json:"-"`
	Result  Result        `json:"result"`
}

// bisector is one session of a bisection.
type bisector struct {
	opt options
	// paths holds the first-parent paths by the index of the range that
	// owns them: 0 the main range's, then those of merge ranges.
	paths map[int][]gitrev.Commit
	// path is the current range's path and good its good end (position -1).
	path  []gitrev.Commit
	good  gitrev.Commit
	st    *State
	start time.Time
	dir   float64 // +1 when bad values are higher than good ones, -1 otherwise
	ends  [2]Samples
	// slots holds the machine of each k-ary candidate slot's last look.
	slotMu sync.Mutex
	slots  map[int]string
}

// search bisects path, the first-parent commits after good (oldest first, the
// bad commit last), and returns the result. Errors: [ErrNoChange],
// [ErrWrongDirection] and [ErrEndFailed] (each with the figures, and with a
// partial Result), failures of the measurer, and ctx's error when
// interrupted (after saving the state).
func search(ctx context.Context, opt options, good gitrev.Commit, path []gitrev.Commit) (*Result, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	if len(path) == 0 {
		return nil, fmt.Errorf("bisect: no commits after %s", good.Short())
	}
	b := &bisector{opt: opt, paths: map[int][]gitrev.Commit{0: path}, path: path, good: good, start: opt.Now()}
	if opt.Resume != nil {
		if err := b.resume(ctx, opt.Resume, path); err != nil {
			return nil, err
		}
	} else {
		last := path[len(path)-1]
		b.st = &State{Version: StateVersion, Phase: PhaseEnds, Lo: -1, Hi: len(path) - 1, Used: map[string]int{},
			Result: Result{Metric: opt.Metric, Better: opt.Better, Improvement: opt.Improvement,
				Layouts: opt.Measurer.Layouts(), Fixed: opt.Fixed,
				Good: good, Bad: last, Commits: len(path),
				Ranges: []Range{{Kind: RangeMain, Good: good, Bad: last, Commits: len(path), Span: [2]int{-1, len(path) - 1}, Status: RangeSearching}}}}
	}
	return b.run(ctx)
}

func (b *bisector) resume(ctx context.Context, st *State, path []gitrev.Commit) error {
	if st.Version == 1 {
		migrateV1(st)
	}
	if st.Version != StateVersion {
		return fmt.Errorf("bisect: saved state has version %d, this perfbot reads %d; start again", st.Version, StateVersion)
	}
	r := &st.Result
	last := path[len(path)-1]
	if r.Good.Hash != b.good.Hash || r.Bad.Hash != last.Hash || r.Commits != len(path) {
		return fmt.Errorf("bisect: saved state is for %s..%s, not %s..%s", r.Good.Short(), r.Bad.Short(), b.good.Short(), last.Short())
	}
	if r.Layouts != b.opt.Measurer.Layouts() || r.Fixed != b.opt.Fixed {
		return fmt.Errorf("bisect: saved state was made with other options")
	}
	if len(r.Ranges) == 0 || st.Range < 0 || st.Range >= len(r.Ranges) {
		return fmt.Errorf("bisect: saved state has no range %d", st.Range)
	}
	for i, rg := range r.Ranges {
		if rg.Path < 0 || rg.Path > i || r.Ranges[rg.Path].Path != rg.Path || rg.Span[0] < -1 || rg.Span[0] >= rg.Span[1] {
			return fmt.Errorf("bisect: saved state has an invalid range %d", i)
		}
	}
	st.Lo, st.Hi = st.LoHi[0], st.LoHi[1]
	b.st = st
	if err := b.enter(ctx); err != nil {
		return err
	}
	if sp := r.Ranges[st.Range].Span; st.Lo < sp[0] || st.Hi > sp[1] || st.Lo >= st.Hi || st.Hi >= len(b.path) {
		return fmt.Errorf("bisect: saved state has an invalid range (%d, %d]", st.Lo, st.Hi)
	}
	if st.Used == nil {
		st.Used = map[string]int{}
	}
	st.Elapsed = st.Result.Wall
	b.reopen()
	b.logf("resuming: %s", b.progressLine())
	return nil
}

func (b *bisector) progressLine() string {
	if b.st.Range > 0 && b.st.Phase != PhaseTriage && b.st.Phase != PhaseDone {
		return fmt.Sprintf("range %d of %d (%s): %s", b.st.Range+1, len(b.st.Result.Ranges), b.rangeName(b.st.Range), b.phaseLine())
	}
	return b.phaseLine()
}

func (b *bisector) phaseLine() string {
	switch b.st.Phase {
	case PhaseEnds:
		return "measuring the ends"
	case PhaseSteps:
		return fmt.Sprintf("%d steps done, %d commits left", len(b.st.Result.Steps), b.st.Hi-b.st.Lo)
	case PhaseCheck:
		return "checking the culprit"
	case PhaseRetest:
		return "re-testing an unconfirmed culprit"
	case PhaseNext:
		return "between ranges"
	case PhaseTriage:
		return "triaging the culprits"
	}
	return "finished"
}

func (b *bisector) logf(format string, args ...any) {
	if b.opt.Log != nil {
		b.opt.Log(fmt.Sprintf(format, args...))
	}
}

// save checkpoints the state.
func (b *bisector) save(ctx context.Context) error {
	st := b.st
	st.LoHi = [2]int{st.Lo, st.Hi}
	b.sync()
	st.Result.Wall = st.Elapsed + b.opt.Now().Sub(b.start)
	used := 0
	for _, n := range st.Used {
		used += n
	}
	st.Result.RunsUsed = used
	if b.opt.Save == nil {
		return nil
	}
	// A cancelled ctx must not lose the last decision.
	return b.opt.Save(context.WithoutCancel(ctx), st)
}

func (b *bisector) run(ctx context.Context) (*Result, error) {
	r := &b.st.Result
	b.dirFromEnds()
	b.sync()
	for {
		var err error
		switch b.st.Phase {
		case PhaseEnds:
			err = b.measureEnds(ctx)
		case PhaseSteps:
			err = b.step(ctx)
		case PhaseCheck:
			err = b.check(ctx)
		case PhaseRetest:
			err = b.retest(ctx)
		case PhaseNext:
			err = b.next(ctx)
		case PhaseTriage:
			err = b.triage(ctx)
		case PhaseDone:
			return r, nil
		default:
			return r, fmt.Errorf("bisect: saved state has unknown phase %q", b.st.Phase)
		}
		if err != nil {
			if serr := b.save(ctx); serr != nil && ctx.Err() == nil {
				return r, errors.Join(err, serr)
			}
			return r, err
		}
		if err := b.save(ctx); err != nil {
			return r, err
		}
	}
}

// measure runs one batch and books its cost.
func (b *bisector) measure(ctx context.Context, reqs []Request) ([]Samples, error) {
	batch, err := b.opt.Measurer.Measure(ctx, reqs)
	if batch != nil {
		rg := b.rg()
		b.st.Result.Runs += batch.Taken
		rg.Runs += batch.Taken
		if b.st.Phase == PhaseCheck {
			b.st.Result.CheckRuns += batch.Taken
			rg.CheckRuns += batch.Taken
		}
		b.st.Result.Builds += batch.Built
		if b.st.Result.Better == 0 && batch.Better != 0 {
			b.st.Result.Better = batch.Better
		}
	}
	if err != nil {
		return nil, err
	}
	if len(batch.Samples) != len(reqs) {
		return nil, fmt.Errorf("bisect: measurer returned %d results for %d requests", len(batch.Samples), len(reqs))
	}
	for i, s := range batch.Samples {
		n := s.runs() * max(len(s.Layouts), 1)
		if n > b.st.Used[reqs[i].Commit.Hash] {
			b.st.Used[reqs[i].Commit.Hash] = n
		}
	}
	return batch.Samples, nil
}
