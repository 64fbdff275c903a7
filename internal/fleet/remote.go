package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// Client queues builds and rounds in the fleet and waits for them: the
// orchestrating side of a fleet (the server's compare and bisect jobs).
type Client struct {
	Pool  *pgxpool.Pool
	River *river.Client[pgx.Tx]
	// Results is the fleet's results store: a round a dead machine
	// stored whole is not taken again.
	Results *store.Store
	// DeadAfter: a machine whose last heartbeat is older is dead, and the
	// rounds it had not finished go to another machine (default 30s).
	DeadAfter time.Duration
	// Poll is how often a waiting job's state is read (default 200ms).
	Poll time.Duration
	Log  func(format string, args ...any)

	mu       sync.Mutex
	assigned map[string]int    // machine -> rounds queued by this process, not yet done
	remotes  int64             // Remotes made by For
	pins     map[string]string // pin key (a measurement's session, or Remote.On's key) -> its machine
	moves    map[string]int    // build (buildKey) -> the Move of its latest job, for builds queued again
}

func (c *Client) init() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.assigned == nil {
		c.assigned, c.pins, c.moves = map[string]int{}, map[string]string{}, map[string]int{}
	}
	if c.DeadAfter <= 0 {
		c.DeadAfter = 30 * time.Second
	}
	if c.Poll <= 0 {
		c.Poll = 200 * time.Millisecond
	}
	if c.Log == nil {
		c.Log = func(string, ...any) {}
	}
}

// For returns the measure.Builder and measure.RoundExecutor of one job on
// machines of class.
func (c *Client) For(spec JobSpec, class string) *Remote {
	c.init()
	c.mu.Lock()
	c.remotes++
	id := c.remotes
	c.mu.Unlock()
	return &Remote{c: c, spec: spec, class: class, id: id, used: &pinSet{}}
}

// Remote builds and measures one job in the fleet.
type Remote struct {
	c     *Client
	spec  JobSpec
	class string
	pin   string // the key whose machine takes the rounds; "" is each measurement's session
	id    int64  // this Remote's number in its Client: On's keys are its own
	used  *pinSet
	// bound is the one machine that takes every round (Bind); "" lets
	// the rounds move to another machine when theirs dies.
	bound string
}

// pinSet is the pins a Remote (and those On made from it) used.
type pinSet struct {
	mu   sync.Mutex
	pins []string
}

func (p *pinSet) add(pin string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.pins, pin) {
		p.pins = append(p.pins, pin)
	}
}

// Close forgets the machines kept for the Remote's measurements and its
// On keys: the orchestration that used it is over (so that pins do not
// pile up in a long-running server).
func (r *Remote) Close() {
	r.used.mu.Lock()
	defer r.used.mu.Unlock()
	for _, p := range r.used.pins {
		r.c.unpin(p)
	}
	r.used.pins = nil
}

// On returns the Remote whose measurements all go to the machine kept for
// key: the machine of key's earlier rounds while it lives (bisect's k-ary
// search keeps each candidate slot on one machine this way).
func (r *Remote) On(key string) measure.Executor {
	return &Remote{c: r.c, spec: r.spec, class: r.class, id: r.id, used: r.used, bound: r.bound, pin: fmt.Sprintf("remote %d: %s", r.id, key)}
}

// wait polls job id until it is finalized and returns its row.
func (c *Client) wait(ctx context.Context, id int64, tick func(*rivertype.JobRow) error) (*rivertype.JobRow, error) {
	t := time.NewTicker(c.Poll)
	defer t.Stop()
	for {
		row, err := c.River.JobGet(ctx, id)
		if err != nil {
			return nil, err
		}
		if row.FinalizedAt != nil {
			return row, nil
		}
		if tick != nil {
			if err := tick(row); err != nil {
				return row, err
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// failure says why a finalized job did not complete.
func failure(row *rivertype.JobRow) error {
	msg := string(row.State)
	if n := len(row.Errors); n > 0 {
		msg += ": " + row.Errors[n-1].Error
	}
	return fmt.Errorf("%s job %d %s", row.Kind, row.ID, msg)
}

// Build queues the build of commit under v on a machine of the class (once:
// a build queued or made before is not queued again) and waits for it.
//
// A layout variant's files (its wrappers, its padding) travel with the
// build: see knobfiles.go.
func (r *Remote) Build(ctx context.Context, j *job.Job, commit gitrev.Commit, v job.Variant) (*build.Result, error) {
	a := BuildArgs{Job: r.spec, Commit: commit.Hash, Variant: v, Class: r.class}
	// Builds are the class's, whatever machine a triage's runs are
	// bound to.
	a.Job.Bound = ""
	if r.c.Results != nil {
		kf, err := knobFiles(ctx, r.c.Pool, knobsRoot(r.c.Results), v)
		if err != nil {
			return nil, fmt.Errorf("building %s (%s): %w", commit.Short(), variantName(v), err)
		}
		a.Knobs = kf
	}
	row, cached, err := r.buildJob(ctx, a)
	if err != nil {
		return nil, err
	}
	if row.State != rivertype.JobStateCompleted {
		return nil, fmt.Errorf("building %s: %w", commit.Short(), failure(row))
	}
	var out BuildOutput
	if err := json.Unmarshal(row.Output(), &out); err != nil {
		return nil, fmt.Errorf("build job %d: output: %w", row.ID, err)
	}
	rec := &store.BuildRecord{Key: out.Key, Commit: commit.Hash, Variant: v.Name, Status: store.BuildStatus(out.Status), Error: out.Error,
		Started: *row.AttemptedAt, Duration: row.FinalizedAt.Sub(*row.AttemptedAt)}
	if rec.Status != store.BuildOK {
		return &build.Result{Record: rec, Cached: cached}, fmt.Errorf("%w: %s (on %s): %s", build.ErrFailed, commit.Short(), out.Machine, out.Error)
	}
	return &build.Result{Record: rec, Cached: cached, Artifacts: out.Artifacts}, nil
}

// errGone stops waiting for a job whose worker is gone.
var errGone = errors.New("the job's worker is gone")

// Parallel says that a measurement's targets may be built at once: each
// build is a job on its own machine of the class (measure.ParallelBuilder).
func (r *Remote) Parallel() bool { return true }

// buildJob queues build a and waits until its job is finalized. cached
// says the job was queued before (River's unique jobs): not built now.
//
// When the worker building it is gone (its machine's heartbeat is
// DeadAfter old, or the machine's worker was restarted: [Client.gone]),
// the job is cancelled and the build queued again, with Move one higher,
// for any machine of the class, at once: River's rescuer would give the
// job to another worker only after its timeout, which follows the job
// file's build timeout (an hour for a kernel), and River has no call that
// makes a running job available again (JobRetry leaves running jobs
// alone). What the gone worker built is never used unless it finished:
// a build is published (artifacts as blobs, then the record) only once it
// completed, the first successful record of a key wins for good
// (putBuild), and a worker still alive behind a lost network has
// cancelled its build itself (its heartbeat failed) or has it cancelled
// by River's JobCancel when it hears of it.
func (r *Remote) buildJob(ctx context.Context, a BuildArgs) (*rivertype.JobRow, bool, error) {
	a.Move = r.c.buildMove(a)
	for {
		res, err := r.c.River.Insert(ctx, a, nil)
		if err != nil {
			return nil, false, fmt.Errorf("queueing the build of %s: %w", gitrev.Short(a.Commit), err)
		}
		told := false
		machine := ""
		row, err := r.c.wait(ctx, res.Job.ID, func(row *rivertype.JobRow) error {
			m, gone, err := r.c.gone(ctx, row)
			if err != nil {
				return err
			}
			if gone {
				machine = m
				return errGone
			}
			if !told && time.Since(res.Job.CreatedAt) > 10*time.Second {
				if live, _ := r.c.live(ctx, r.class, nil); len(live) == 0 {
					r.c.Log("the build of %s waits for a machine of class %s", gitrev.Short(a.Commit), r.class)
					told = true
				}
			}
			return nil
		})
		if err == nil {
			return row, res.UniqueSkippedAsDuplicate, nil
		}
		if !errors.Is(err, errGone) {
			return nil, false, err
		}
		row, err = r.c.River.JobCancel(ctx, row.ID)
		if err != nil {
			return nil, false, fmt.Errorf("cancelling build job %d of %s: %w", res.Job.ID, gitrev.Short(a.Commit), err)
		}
		if row.State == rivertype.JobStateCompleted {
			// It finished after all, just before the cancel.
			return row, res.UniqueSkippedAsDuplicate, nil
		}
		a.Move++
		r.c.setBuildMove(a)
		r.c.Log("the worker building %s on machine %s is gone: build job %d cancelled, the build queued again for a machine of class %s",
			gitrev.Short(a.Commit), machine, row.ID, r.class)
	}
}

// buildKey names a build apart from its Move.
func buildKey(a BuildArgs) string {
	a.Move = 0
	data, _ := json.Marshal(a)
	return string(data)
}

// buildMove returns the Move a's build was last queued with by this
// process: a later measurement of the commit waits for that job, not for
// a new one once River has finalized the abandoned job as cancelled.
func (c *Client) buildMove(a BuildArgs) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.moves[buildKey(a)]
}

func (c *Client) setBuildMove(a BuildArgs) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.moves[buildKey(a)] = a.Move
}

// Execute is not used: a fleet takes whole rounds (ExecuteRounds).
func (r *Remote) Execute(context.Context, measure.Task) (*store.RunRecord, error) {
	return nil, errors.New("fleet: runs are taken in rounds (measure uses ExecuteRounds)")
}

// ExecuteRounds queues every round on one machine of the class (the
// machine of the measurement's session, if it has one) and waits for them.
// When that machine dies (no heartbeat for DeadAfter), the rounds it had
// not finished are cancelled there and queued again, with the same runs,
// on a live machine (another one, or the same once it is back); when only
// its worker was started again, the rounds the earlier process had taken
// are queued again on it (follow). The runs of each round come from one
// machine. A bound Remote (Bind) never moves rounds: when its machine
// dies it returns a *MachineLostError once the rounds there are
// cancelled.
func (r *Remote) ExecuteRounds(ctx context.Context, rounds [][]measure.Task, done func(int, []*store.RunRecord) error) error {
	if len(rounds) == 0 {
		return nil
	}
	session := rounds[0][0].Session
	pin := r.pin
	if pin == "" {
		pin = "session " + session
	}
	r.used.add(pin)
	moves := 0
	pending := make([]int, len(rounds))
	for i := range pending {
		pending[i] = i
	}
	for len(pending) > 0 {
		machine, err := r.machine(ctx, pin, len(pending))
		if err != nil {
			return err
		}
		ids, err := r.queue(ctx, rounds, pending, session, machine, moves)
		if err != nil {
			r.c.release(machine, len(pending))
			return err
		}
		left, err := r.follow(ctx, rounds, ids, pending, session, machine, &moves, done)
		if err != nil {
			return err
		}
		pending = nil
		for _, i := range left {
			// River records a job's completion after its work returns:
			// a machine killed in between stored the round but left
			// the job running.
			recs, err := r.stored(ctx, rounds[i], machine)
			if err != nil {
				return err
			}
			if recs != nil {
				if err := done(i, recs); err != nil {
					return err
				}
				continue
			}
			pending = append(pending, i)
		}
		if len(left) > 0 && r.bound != "" && len(pending) > 0 {
			return &MachineLostError{Machine: machine, Class: r.class, Rounds: len(pending)}
		}
		if len(left) > 0 {
			moves++
			r.c.Log("machine %s stopped answering: %d of its %d unfinished rounds are queued again on a live machine of class %s (the others it had stored whole)",
				machine, len(pending), len(left), r.class)
		}
	}
	return nil
}

// queue inserts the rounds pending on machine, in order.
func (r *Remote) queue(ctx context.Context, rounds [][]measure.Task, pending []int, session, machine string, moves int) ([]int64, error) {
	params := make([]river.InsertManyParams, len(pending))
	for k, i := range pending {
		a := RoundArgs{Job: r.spec, Class: r.class, Machine: machine, Session: session, Round: i, Move: moves}
		for _, t := range rounds[i] {
			s := Slot{Commit: t.Key.Commit, Variant: t.Variant, Index: t.Key.Index, BuildKey: t.Build.Record.Key, Artifacts: t.Build.Artifacts}
			if t.Warmup {
				s.Index = 0
			}
			a.Slots = append(a.Slots, s)
		}
		params[k] = river.InsertManyParams{Args: a}
	}
	res, err := r.c.River.InsertMany(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("queueing rounds on %s: %w", machine, err)
	}
	ids := make([]int64, len(res))
	for k, x := range res {
		ids[k] = x.Job.ID
	}
	return ids, nil
}

// follow waits for the round jobs ids (rounds pending) on machine and
// hands each finished round to done. It returns the rounds left when the
// machine died, after cancelling their jobs.
//
// When the machine lives but its worker was started again (another
// process instance: [Client.gone]), only the rounds whose job the gone
// process had taken are cancelled; each is handed to done when that
// process stored it whole, else queued again on the machine (Move one
// higher), and followed with the others: the rounds waiting in the queue,
// and the round the new process is taking, are left as they are.
func (r *Remote) follow(ctx context.Context, rounds [][]measure.Task, ids []int64, pending []int, session, machine string,
	moves *int, done func(int, []*store.RunRecord) error) ([]int, error) {
	open := map[int64]int{} // job id -> its round
	for k, id := range ids {
		open[id] = pending[k]
	}
	defer func() { r.c.release(machine, len(open)) }()
	t := time.NewTicker(r.c.Poll)
	defer t.Stop()
	for len(open) > 0 {
		var gone []int64 // jobs taken by a process of the machine that is gone
		for _, id := range slices.Sorted(maps.Keys(open)) {
			row, err := r.c.River.JobGet(ctx, id)
			if err != nil {
				return nil, err
			}
			if row.FinalizedAt == nil {
				_, g, err := r.c.gone(ctx, row)
				if err != nil {
					return nil, err
				}
				if g {
					gone = append(gone, id)
				}
				continue
			}
			i := open[id]
			delete(open, id)
			r.c.release(machine, 1)
			if row.State != rivertype.JobStateCompleted {
				// Its run numbers are free again for a later measurement.
				if err := r.c.unclaim(ctx, row.EncodedArgs); err != nil {
					r.c.Log("giving up the run numbers of round job %d: %v", id, err)
				}
				return nil, fmt.Errorf("round %d on %s: %w", i, machine, failure(row))
			}
			var out RoundOutput
			if err := json.Unmarshal(row.Output(), &out); err != nil {
				return nil, fmt.Errorf("round job %d: output: %w", id, err)
			}
			if err := done(i, out.Runs); err != nil {
				return nil, err
			}
		}
		if len(open) == 0 {
			break
		}
		if alive, err := r.c.alive(ctx, machine); err != nil {
			return nil, err
		} else if !alive {
			var left []int
			for _, id := range slices.Sorted(maps.Keys(open)) {
				left = append(left, open[id])
				if _, err := r.c.River.JobCancel(ctx, id); err != nil {
					return nil, err
				}
			}
			slices.Sort(left)
			return left, nil
		}
		if len(gone) > 0 {
			if err := r.requeue(ctx, rounds, open, gone, session, machine, moves, done); err != nil {
				return nil, err
			}
		}
		select {
		case <-ctx.Done():
			r.withdraw(slices.Collect(maps.Keys(open)))
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	return nil, nil
}

// requeue cancels the round jobs gone of open, taken by a worker process
// of the live machine that is gone (it was started again), and queues
// those rounds again there, except those it stored whole, which go to
// done. open is updated to follow the new jobs.
func (r *Remote) requeue(ctx context.Context, rounds [][]measure.Task, open map[int64]int, gone []int64, session, machine string,
	moves *int, done func(int, []*store.RunRecord) error) error {
	var again []int
	for _, id := range gone {
		i := open[id]
		delete(open, id)
		if _, err := r.c.River.JobCancel(ctx, id); err != nil {
			return err
		}
		recs, err := r.stored(ctx, rounds[i], machine)
		if err != nil {
			return err
		}
		if recs != nil {
			r.c.release(machine, 1)
			if err := done(i, recs); err != nil {
				return err
			}
			continue
		}
		again = append(again, i)
	}
	r.c.Log("the worker of machine %s was started again: %d of the %d rounds its earlier process had taken are queued again there (the others it had stored whole); its other rounds stay as they are",
		machine, len(again), len(gone))
	if len(again) == 0 {
		return nil
	}
	*moves++
	ids, err := r.queue(ctx, rounds, again, session, machine, *moves)
	if err != nil {
		r.c.release(machine, len(again))
		return err
	}
	for k, id := range ids {
		open[id] = again[k]
	}
	return nil
}

// withdraw cancels the round jobs of ids that no machine has started, when
// the measurement that queued them stops (the server stops, or its lease
// ends): the measurement that resumes it queues the rounds it still needs.
// Rounds being taken are left to finish; their runs are stored. The run
// numbers of a withdrawn round are given up (see [Remote.Reserve]).
func (r *Remote) withdraw(ids []int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, id := range ids {
		row, err := r.c.River.JobGet(ctx, id)
		if err != nil || row.State == rivertype.JobStateRunning || row.FinalizedAt != nil {
			continue
		}
		if row, err = r.c.River.JobCancel(ctx, id); err == nil && row.State == rivertype.JobStateCancelled {
			if err := r.c.unclaim(ctx, row.EncodedArgs); err != nil {
				r.c.Log("giving up the run numbers of round job %d: %v", id, err)
			}
		}
	}
}

// stored returns the runs of a round as machine stored them, when it
// stored every one (nil otherwise).
func (r *Remote) stored(ctx context.Context, tasks []measure.Task, machine string) ([]*store.RunRecord, error) {
	if r.c.Results == nil {
		return nil, nil
	}
	var out []*store.RunRecord
	for _, t := range tasks {
		if t.Warmup {
			continue
		}
		recs, err := r.c.Results.Runs(ctx, t.Key.Job, t.Key.Commit, t.Key.Variant)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(recs, func(rec store.RunRecord) bool {
			return rec.Index == t.Key.Index && rec.Session == t.Session && rec.Machine == machine
		})
		if i < 0 {
			return nil, nil
		}
		out = append(out, &recs[i])
	}
	return out, nil
}
