package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/perfbot/perfbot/internal/compare"
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

// Table reads a finished comparison's table from the fleet's results
// store st: a column per commit, of its runs in the rounds the comparison
// took, paired within each round's machine (the table's Machines say
// which), tested at alpha.
func (o CompareOutput) Table(ctx context.Context, st *store.Store, a CompareArgs, alpha float64) (*compare.Table, error) {
	j, err := a.Job.Load()
	if err != nil {
		return nil, err
	}
	return stored.Table(ctx, st, j.Key(), o.sources(a), alpha)
}

// sources are the columns of a comparison's table: each commit's runs in
// the rounds the comparison took.
func (o CompareOutput) sources(a CompareArgs) []stored.Source {
	srcs := make([]stored.Source, len(o.Commits))
	for i, c := range o.Commits {
		srcs[i] = stored.Source{Commit: c, Variant: a.Variant.Name, Layouts: []string{measure.VariantID(a.Variant)},
			Round: stored.InRounds(o.Rounds)}
	}
	return srcs
}
