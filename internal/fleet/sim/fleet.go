package sim

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing/synctest"
	"time"

	"github.com/perfbot/perfbot/internal/store"
)

// Config describes a simulated fleet.
type Config struct {
	// Workers is the number of machines of the class.
	Workers int
	// Build is how long a build takes on a worker, Run how long a run
	// (a warm-up too).
	Build, Run time.Duration
	// Truth draws the figures of the runs.
	Truth *Truth
	// Metric names the figure in the runs' records, with its unit.
	Metric, Unit string
}

// Fleet is a simulated fleet of Config.Workers machines of one class on
// the virtual clock of the synctest bubble it was made in. Its Builder and
// Executor are a measure.Env's; Close stops it.
type Fleet struct {
	cfg  Config
	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	incoming []*request // asked for since the last dispatch, in no order
	classQ   []*qjob    // builds not yet fetched, in queue order
	workers  []*worker
	builds   map[string]*buildState // by build key
	pins     map[string]int         // pin -> worker
	claims   map[store.RunKey]string
	seq      int // fetch order
	stats    Stats
}

// Stats is what a fleet did.
type Stats struct {
	// Builds and Runs are the builds made and the runs taken (warm-ups
	// included), Rounds the rounds.
	Builds, Runs, Rounds int
	// Busy is each worker's time spent building or running.
	Busy []time.Duration
}

// worker is one machine: its round queue and its two River job slots
// (one for the class's build queue, one for its own round queue), each
// holding a fetched job until it finished. It works one job at a time.
type worker struct {
	name         string
	roundQ       []*qjob
	build, round *qjob // fetched (waiting or running)
	running      *qjob
	until        time.Time
}

// qjob is one queue job: a build or a round.
type qjob struct {
	build *buildState
	round *roundState
	dur   time.Duration
	seq   int // when fetched
}

// New starts a fleet. It must be called inside a synctest bubble; the
// pipeline that uses it runs in the same bubble.
func New(cfg Config) (*Fleet, error) {
	if cfg.Workers < 1 {
		return nil, fmt.Errorf("sim: %d workers: want at least 1", cfg.Workers)
	}
	if cfg.Build <= 0 || cfg.Run <= 0 {
		return nil, fmt.Errorf("sim: builds of %v and runs of %v: both must take time", cfg.Build, cfg.Run)
	}
	if cfg.Truth == nil {
		return nil, errors.New("sim: no Truth")
	}
	if err := cfg.Truth.Check(); err != nil {
		return nil, err
	}
	f := &Fleet{cfg: cfg, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		builds: map[string]*buildState{}, pins: map[string]int{}, claims: map[store.RunKey]string{}}
	for i := range cfg.Workers {
		f.workers = append(f.workers, &worker{name: fmt.Sprintf("w%02d", i+1)})
	}
	f.stats.Busy = make([]time.Duration, cfg.Workers)
	go f.loop()
	return f, nil
}

// Close stops the fleet and returns what it did, with an error when work
// was still queued or running (the pipeline left work behind).
func (f *Fleet) Close() (Stats, error) {
	close(f.stop)
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if n := f.open(); n > 0 {
		err = fmt.Errorf("sim: %d jobs still queued or running when the fleet stopped", n)
	}
	st := f.stats
	st.Busy = slices.Clone(st.Busy)
	return st, err
}

func (f *Fleet) open() int {
	n := len(f.incoming) + len(f.classQ)
	for _, w := range f.workers {
		n += len(w.roundQ)
		if w.build != nil {
			n++
		}
		if w.round != nil {
			n++
		}
	}
	return n
}

// ask hands a request to the dispatcher.
func (f *Fleet) ask(r *request) {
	f.mu.Lock()
	f.incoming = append(f.incoming, r)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// loop is the dispatcher. Once every goroutine of the bubble waits
// (synctest.Wait), everything asked for at this instant is known: it is
// admitted in a fixed order, so that a run of the simulation does not
// depend on how goroutines were scheduled, and the workers start what
// they can. Then the clock moves to the next job's end (or to the next
// request, which a timer of the pipeline may make earlier).
func (f *Fleet) loop() {
	defer close(f.done)
	for {
		synctest.Wait()
		f.mu.Lock()
		f.admit()
		f.schedule()
		next, busy := f.nextEnd()
		f.mu.Unlock()
		if !busy {
			select {
			case <-f.wake:
				continue
			case <-f.stop:
				return
			}
		}
		t := time.NewTimer(time.Until(next))
		select {
		case <-t.C:
			f.mu.Lock()
			f.finish(time.Now())
			f.mu.Unlock()
		case <-f.wake:
			t.Stop()
		case <-f.stop:
			t.Stop()
			return
		}
	}
}
