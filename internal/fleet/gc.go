package fleet

import (
	"context"
	"sync"
	"time"

	"github.com/perfbot/perfbot/internal/build"
)

// Defaults of the server's worktree collection.
const (
	defaultGCEvery    = time.Hour
	defaultGCMaxBytes = 20 << 30
	defaultGCMaxAge   = 7 * 24 * time.Hour
)

// gcLoop removes the server workspace's old build worktrees within a
// budget, periodically (build.CollectWorktrees: least recently used
// first, never one a build holds; cached artifacts and results stay),
// and the fleet's blobs nothing refers to (CollectBlobs).
type gcLoop struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (g *gcLoop) start(dir string, budget build.Budget, every time.Duration, blobs func(context.Context) (BlobGC, error), logf func(string, ...any)) {
	if budget.Off() {
		budget = build.Budget{MaxBytes: defaultGCMaxBytes, MaxAge: defaultGCMaxAge}
	}
	if every <= 0 {
		every = defaultGCEvery
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			got, err := build.CollectWorktrees(ctx, dir, budget, time.Now())
			if err != nil && ctx.Err() == nil {
				logf("fleet: collecting worktrees: %v", err)
			}
			if got.Removed > 0 {
				logf("fleet: %s", got)
			}
			if bg, err := blobs(ctx); err != nil && ctx.Err() == nil {
				logf("fleet: %v", err)
			} else if bg.Removed > 0 {
				logf("fleet: %s", bg)
			}
		}
	}()
}

// stop ends the loop and waits for a collection in progress.
func (g *gcLoop) stop() {
	if g.cancel != nil {
		g.cancel()
		g.wg.Wait()
	}
}
