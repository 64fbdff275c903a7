package history

import (
	"context"
	"errors"
	"strings"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/store"
)

// Annotate sets the series' Changes: the change points watch handled in
// it (one state per job, history, metric and pair of neighbouring tested
// commits), each with its culprits and what their findings in the store
// say of the series' metric: the verdict and change that the finding
// lists for jobName's metric (else the finding's main ones), its state,
// and whether it was withdrawn.
func Annotate(ctx context.Context, st *store.Store, s *Series, jobName string) error {
	s.Changes = nil
	// One read of the handled changes' keys, not one per step: a history
	// of 10,000 commits has few changes.
	keys, err := st.StateKeys(ctx, ChangeKind)
	if err != nil {
		return err
	}
	handled := make(map[string]bool, len(keys))
	for _, k := range keys {
		handled[k] = true
	}
	for k := 1; k < len(s.Points); k++ {
		a, b := s.Points[k-1], s.Points[k]
		key := ChangeKey(s.Job, s.Variant, s.Metric, a.Commit.Hash, b.Commit.Hash)
		if !handled[key] {
			continue
		}
		data, err := st.GetState(ctx, ChangeKind, key)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		c := Change{Index: k, From: a.Commit.Hash, To: b.Commit.Hash}
		if a.Level > 0 {
			c.Step = 100 * (b.Level/a.Level - 1)
		}
		for _, hash := range strings.Fields(string(data)) {
			cu := Culprit{Commit: hash}
			rec, err := st.Finding(ctx, hash)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if err == nil {
				cu.State, cu.Reason, cu.Withdrawn = string(rec.State), rec.Reason, rec.Withdrawn
				if f, err := finding.Decode(rec.Data); err == nil {
					cu.Subject, cu.Verdict, cu.Change = f.Subject, f.Verdict, f.Change
					for _, m := range f.Metrics {
						if m.Metric == s.Metric && (m.Job == jobName || jobName == "") {
							cu.Verdict, cu.Change = m.Verdict, m.Change
							break
						}
					}
				}
			}
			c.Culprits = append(c.Culprits, cu)
		}
		if len(c.Culprits) == 0 {
			c.Note = "no confirmed culprit"
		}
		s.Changes = append(s.Changes, c)
	}
	return nil
}
