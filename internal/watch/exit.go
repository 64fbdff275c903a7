package watch

import (
	"context"
	"errors"
	"slices"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/store"
)

// Regressions returns the culprits of the cycle's findings (new, or
// updated with another metric) whose verdict is a real regression and
// that nobody dismissed or a force-push withdrew: what makes `watch
// --once` exit 1. It reads the stores next to the job files (Local).
func (c *Config) Regressions(ctx context.Context, rep *CycleReport) ([]string, error) {
	return regressions(ctx, c, Local{}, rep)
}

// Regressions is Config.Regressions in the watcher's stores (Places).
func (w *Watcher) Regressions(ctx context.Context, rep *CycleReport) ([]string, error) {
	return regressions(ctx, w.Config, w.places(), rep)
}

func regressions(ctx context.Context, c *Config, places Places, rep *CycleReport) ([]string, error) {
	var out []string
	if len(rep.Findings) == 0 {
		return nil, nil
	}
	for _, jc := range c.Jobs {
		st, done, err := places.Store(ctx, jc)
		if err != nil {
			return out, err
		}
		out, err = regressionsIn(ctx, st, rep.Findings, out)
		done()
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// regressionsIn adds to out the culprits among culprits whose finding in
// st is a real regression nobody dismissed and not withdrawn.
func regressionsIn(ctx context.Context, st *store.Store, culprits, out []string) ([]string, error) {
	for _, culprit := range culprits {
		if slices.Contains(out, culprit) {
			continue
		}
		r, err := st.Finding(ctx, culprit)
		if errors.Is(err, store.ErrNotFound) {
			continue // another store's
		}
		if err != nil {
			return out, err
		}
		f, err := finding.Decode(r.Data)
		if err != nil {
			return out, err
		}
		if f.Kind() == finding.Regression && !r.Withdrawn && r.State != store.Dismissed {
			out = append(out, culprit)
		}
	}
	return out, nil
}

// ExitStatus is watch --once's exit status for the cycle, given its
// Regressions: 2 when a job or branch failed (an error wins), 1 when the
// cycle found a new real regression, else 0.
func (r *CycleReport) ExitStatus(regressions []string) int {
	switch {
	case len(r.Errors) > 0:
		return 2
	case len(regressions) > 0:
		return 1
	}
	return 0
}
