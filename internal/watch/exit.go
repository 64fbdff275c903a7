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
// --once` exit 1.
func (c *Config) Regressions(ctx context.Context, rep *CycleReport) ([]string, error) {
	var out []string
	for _, dir := range c.StoreDirs() {
		st, err := store.Open(dir)
		if err != nil {
			return out, err
		}
		for _, culprit := range rep.Findings {
			if slices.Contains(out, culprit) {
				continue
			}
			r, err := st.Finding(ctx, culprit)
			if errors.Is(err, store.ErrNotFound) {
				continue // another store's
			}
			if err != nil {
				st.Close()
				return out, err
			}
			f, err := finding.Decode(r.Data)
			if err != nil {
				st.Close()
				return out, err
			}
			if f.Kind() == finding.Regression && !r.Withdrawn && r.State != store.Dismissed {
				out = append(out, culprit)
			}
		}
		st.Close()
	}
	return out, nil
}
