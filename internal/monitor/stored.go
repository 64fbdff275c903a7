package monitor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/perfbot/perfbot/internal/profile"
	"github.com/perfbot/perfbot/internal/store"
)

// ProfilePath is where the perf-profile monitor left the profile of a
// stored run: ProfileFile in the run's log folder.
func ProfilePath(st *store.Store, key store.RunKey) string {
	return filepath.Join(st.RunDir(key), ProfileFile)
}

// Profile reads the profile of one stored run (perf report output, see
// ProfileFile): each symbol's self share (Hotness.Funcs) and, when call
// graphs were recorded, its children share (Hotness.Children). A run taken
// without perf-profile has none: the error then wraps os.ErrNotExist.
func Profile(st *store.Store, key store.RunKey) (*profile.Hotness, error) {
	return profile.Read(ProfilePath(st, key))
}

// CommitProfile is the profile of a commit and variant (the store's
// variant ID) under a job: each symbol's share averaged over the
// successful runs that have a profile, a symbol missing from a run's
// profile counting 0 there. runs is how many profiles were averaged; none
// is an error wrapping os.ErrNotExist. Triage ranks layout suspects by it
// (profile.Hotness.Of finds a symbol's clones too).
func CommitProfile(ctx context.Context, st *store.Store, jobKey, commit, variant string) (h *profile.Hotness, runs int, err error) {
	recs, err := st.RunsWithoutValues(ctx, jobKey, commit, variant)
	if err != nil {
		return nil, 0, err
	}
	var all []*profile.Hotness
	for _, r := range recs {
		if r.Status != store.RunOK {
			continue
		}
		p, err := Profile(st, r.RunKey)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		all = append(all, p)
	}
	if len(all) == 0 {
		return nil, 0, fmt.Errorf("no stored profile of %.12s (job %s; perf-profile in the job's monitors records one with every run): %w", commit, jobKey, os.ErrNotExist)
	}
	return Merge(all), len(all), nil
}

// Merge averages profiles: each symbol's self (and children) share is
// its mean over the profiles, 0 where one lacks it. Total is the sum of
// the totals; Source and Unit are the first profile's.
func Merge(ps []*profile.Hotness) *profile.Hotness {
	m := &profile.Hotness{Funcs: map[string]float64{}}
	if len(ps) == 0 {
		return m
	}
	m.Source, m.Unit = ps[0].Source, ps[0].Unit
	n := float64(len(ps))
	for _, p := range ps {
		m.Total += p.Total
		m.Skipped += p.Skipped
		for s, f := range p.Funcs {
			m.Funcs[s] += f / n
		}
		for s, f := range p.Children {
			if m.Children == nil {
				m.Children = map[string]float64{}
			}
			m.Children[s] += f / n
		}
	}
	return m
}
