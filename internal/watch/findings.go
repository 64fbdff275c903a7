package watch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/store"
)

// StoreDirs are the results stores of the watch file's jobs (.perfbot next
// to each job file), each once.
func (c *Config) StoreDirs() []string {
	var dirs []string
	for _, jc := range c.Jobs {
		d := filepath.Join(filepath.Dir(jc.File), ".perfbot")
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// Listed is a finding and the store it is in.
type Listed struct {
	Store string
	store.FindingRecord
}

// Findings lists the findings of every store of the watch file, newest
// first.
func (c *Config) Findings(ctx context.Context) ([]Listed, error) {
	var out []Listed
	for _, dir := range c.StoreDirs() {
		st, err := store.Open(dir)
		if err != nil {
			return nil, err
		}
		fs, err := st.Findings(ctx)
		st.Close()
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			out = append(out, Listed{Store: dir, FindingRecord: f})
		}
	}
	slices.SortStableFunc(out, func(a, b Listed) int { return b.Created.Compare(a.Created) })
	return out, nil
}

// SetState sets the state of the finding whose culprit starts with prefix
// (at least 7 hex digits); perfbot keeps, per job, how often its findings
// were dismissed (the job of each dismissed finding).
func (c *Config) SetState(ctx context.Context, prefix string, state store.FindingState, reason string) (string, error) {
	if len(prefix) < 7 {
		return "", fmt.Errorf("commit %q: give at least 7 hex digits", prefix)
	}
	fs, err := c.Findings(ctx)
	if err != nil {
		return "", err
	}
	var match []Listed
	for _, f := range fs {
		if strings.HasPrefix(f.Culprit, prefix) {
			match = append(match, f)
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf("no finding of a commit %s in %s", prefix, strings.Join(c.StoreDirs(), ", "))
	case 1:
	default:
		return "", fmt.Errorf("commit %s is ambiguous: %d findings match", prefix, len(match))
	}
	st, err := store.Open(match[0].Store)
	if err != nil {
		return "", err
	}
	defer st.Close()
	return match[0].Culprit, st.SetFindingState(ctx, match[0].Culprit, state, reason)
}

// Annotate sets the series' Changes: the change points watch handled in
// it (one state per job, history, metric and pair of neighbouring tested
// commits), each with its culprits and what their findings in the store
// say of the series' metric: the verdict and change that the finding
// lists for jobName's metric (else the finding's main ones), its state,
// and whether it was withdrawn.
func Annotate(ctx context.Context, st *store.Store, s *history.Series, jobName string) error {
	s.Changes = nil
	// One read of the handled changes' keys, not one per step: a history
	// of 10,000 commits has few changes.
	keys, err := st.StateKeys(ctx, changeKind)
	if err != nil {
		return err
	}
	handled := make(map[string]bool, len(keys))
	for _, k := range keys {
		handled[k] = true
	}
	for k := 1; k < len(s.Points); k++ {
		a, b := s.Points[k-1], s.Points[k]
		key := changeKey(s.Job, s.Variant, s.Metric, a.Commit.Hash, b.Commit.Hash)
		if !handled[key] {
			continue
		}
		data, err := st.GetState(ctx, changeKind, key)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		c := history.Change{Index: k, From: a.Commit.Hash, To: b.Commit.Hash}
		if a.Level > 0 {
			c.Step = 100 * (b.Level/a.Level - 1)
		}
		for _, hash := range strings.Fields(string(data)) {
			cu := history.Culprit{Commit: hash}
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

// AnchorRatios sets the series' ratios to the anchor watch keeps for its
// job and history (history.Ratios), when it keeps one.
func AnchorRatios(ctx context.Context, st *store.Store, s *history.Series, alpha float64) error {
	anchor, err := Anchor(ctx, st, s.Job, s.Variant)
	if err != nil || anchor == "" {
		return err
	}
	return history.Ratios(ctx, st, s, anchor, alpha)
}

// HistoryVariant is the store's variant id of a job's history by name:
// "plain" (or "") is the plain build's, "forced" the one under forced
// alignment of the layout preset (c by default) that a watch file's
// histories: [forced] keeps; storeDir is the job's results store folder,
// which may hold presets of its own.
func HistoryVariant(name, preset, storeDir string) (string, error) {
	switch name {
	case "", "plain":
		return "", nil
	case "forced":
		h, err := forcedHistory(preset, storeDir)
		return h.id, err
	}
	return "", fmt.Errorf("history %q: want plain or forced", name)
}

// JobStats counts, per job (a finding's main job), its findings and how
// many of them a person dismissed: a job whose findings are mostly
// dismissed needs a bigger effect threshold or another report policy.
func JobStats(fs []Listed) map[string][2]int {
	out := map[string][2]int{}
	for _, r := range fs {
		f, err := finding.Decode(r.Data)
		if err != nil {
			continue
		}
		c := out[f.Job]
		c[0]++
		if r.State == store.Dismissed {
			c[1]++
		}
		out[f.Job] = c
	}
	return out
}
