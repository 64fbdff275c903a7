package measure

import (
	"context"
	"errors"
	"sync"

	"github.com/perfbot/perfbot/internal/build"
)

// A ParallelBuilder is a [Builder] that builds several targets at once
// when Parallel says so: a fleet's builds go to several machines of a
// class, so a measurement's targets need not wait for each other's
// builds. A local *build.Builder is not one: its git worktrees are made
// one at a time.
type ParallelBuilder interface {
	Builder
	Parallel() bool
}

// buildAll builds every target, each to its TargetOutcome: one after
// another, or all at once with a ParallelBuilder. A target that does not
// build gets BuildErr; an error of perfbot itself (not build.ErrFailed)
// cancels the builds still going and is returned, the first one in target
// order that is not the cancellation it caused.
func (m *measurement) buildAll(ctx context.Context, b Builder) error {
	targets := m.out.Targets
	n := len(targets)
	pb, ok := b.(ParallelBuilder)
	if !ok || !pb.Parallel() || n < 2 {
		for i := range targets {
			if err := m.buildOne(ctx, b, i, nil); err != nil {
				return err
			}
		}
		return nil
	}
	var mu sync.Mutex // Progress is not required to be safe for concurrent use
	errs := make([]error, n)
	// An error of perfbot itself stops the other builds at once (a kernel
	// build takes half an hour); a build that fails does not.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = m.buildOne(ctx, b, i, &mu); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !errors.Is(err, context.Canceled) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// buildOne builds target i, telling Progress (under mu when not nil).
func (m *measurement) buildOne(ctx context.Context, b Builder, i int, mu *sync.Mutex) error {
	lock := func() {
		if mu != nil {
			mu.Lock()
		}
	}
	unlock := func() {
		if mu != nil {
			mu.Unlock()
		}
	}
	t := m.out.Targets[i].Target
	n := len(m.out.Targets)
	lock()
	m.progress.Building(i, n, t)
	unlock()
	res, err := b.Build(ctx, m.j, t.Commit, t.Variant)
	lock()
	m.progress.Built(i, n, t, res, err)
	unlock()
	if err != nil {
		if !errors.Is(err, build.ErrFailed) {
			return err
		}
		m.out.Targets[i].BuildErr = err
		return nil
	}
	m.out.Targets[i].Build = res
	return nil
}
