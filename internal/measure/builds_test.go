package measure

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
)

// gateBuilder builds with a real *build.Builder, one build at a time (its
// git worktrees do not mix), after every Build call of the measurement
// has arrived, or after a while: most counts the calls that were in
// Build at once.
type gateBuilder struct {
	b        *build.Builder
	parallel bool
	n        int

	mu      sync.Mutex
	arrived int
	inside  int
	most    int
	all     chan struct{}
	real    sync.Mutex
}

func (g *gateBuilder) Parallel() bool { return g.parallel }

func (g *gateBuilder) Build(ctx context.Context, j *job.Job, c gitrev.Commit, v job.Variant) (*build.Result, error) {
	g.mu.Lock()
	g.inside++
	g.most = max(g.most, g.inside)
	if g.arrived++; g.arrived == g.n {
		close(g.all)
	}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inside--
		g.mu.Unlock()
	}()
	select {
	case <-g.all:
	case <-time.After(3 * time.Second):
	}
	g.real.Lock()
	defer g.real.Unlock()
	return g.b.Build(ctx, j, c, v)
}

// TestParallelBuilds: a ParallelBuilder (a fleet's) gets every target's
// build at once; any other builder one build after another. Either way
// every target is built and measured.
func TestParallelBuilds(t *testing.T) {
	for _, parallel := range []bool{true, false} {
		opt, targets := setup(t, "echo work_ms: VERSION.5\n")
		g := &gateBuilder{b: opt.Builder.(*build.Builder), parallel: parallel, n: len(targets), all: make(chan struct{})}
		opt.Builder = g
		out, err := Measure(context.Background(), loadJob(t, "3"), targets, opt)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: len(targets), false: 1}[parallel]; g.most != want {
			t.Errorf("parallel %v: %d builds at once, want %d", parallel, g.most, want)
		}
		for i, o := range out.Targets {
			if o.Build == nil || o.BuildErr != nil || len(o.Runs) != 3 {
				t.Errorf("parallel %v: target %d: build %v, error %v, %d runs", parallel, i, o.Build, o.BuildErr, len(o.Runs))
			}
		}
	}
}
