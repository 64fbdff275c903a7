package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/perfbot/perfbot/internal/compare/stored"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// OpenResults opens the fleet's results store: perfbot's tables in the
// fleet's PostgreSQL database (store.OpenURL), beside River's and the
// fleet's own. dir is this process's folder for the files the database
// does not hold (store.Options.Dir), on a local disk: the fleet keeps
// artifacts and logs in the database, so nothing needs to be shared.
func OpenResults(ctx context.Context, dbURL, dir string) (*store.Store, error) {
	if dir == "" {
		return nil, errors.New("the fleet's results store needs a local folder")
	}
	st, err := store.OpenURL(ctx, dbURL, store.Options{Dir: dir})
	if err != nil {
		return nil, fmt.Errorf("the fleet's results store: %w", err)
	}
	return st, nil
}

// Sources are the columns of a comparison's table: each commit's runs in
// the rounds the comparison took.
func (o CompareOutput) Sources(a CompareArgs) []stored.Source {
	srcs := make([]stored.Source, len(o.Commits))
	for i, c := range o.Commits {
		srcs[i] = stored.Source{Commit: c, Variant: a.Variant.Name, Layouts: []string{measure.VariantID(a.Variant)},
			Round: stored.InRounds(o.Rounds)}
	}
	return srcs
}

// Machines lists the machines that took a comparison's runs, in the order
// first seen; with more than one, the runs of each round come from one
// machine and are paired within it (compare.Pair holds the machine).
func (o CompareOutput) Machines(ctx context.Context, st *store.Store, a CompareArgs) ([]string, error) {
	j, err := a.Job.Load()
	if err != nil {
		return nil, err
	}
	var ms []string
	in := map[int]bool{}
	for _, r := range o.Rounds {
		in[r] = true
	}
	for _, c := range o.Commits {
		recs, err := st.RunsWithoutValues(ctx, j.Key(), c.Hash, measure.VariantID(a.Variant))
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if in[r.Index] && !contains(ms, r.Machine) {
				ms = append(ms, r.Machine)
			}
		}
	}
	return ms, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
