package measure

import (
	"context"
	"errors"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/compare/stored"
)

// Table reads the comparison of the outcome's targets back from the store,
// the first target the base and each target a column under its variant.
// With Options.WholeRounds the columns hold the outcome's Rounds, paired
// round by round; otherwise every stored run of each target, paired by
// run number. The columns' failed runs are in Column.Failures; a column
// with no successful run is an error, with the table of the failures.
func (o *Outcome) Table(ctx context.Context, alpha float64) (*compare.Table, error) {
	if o.st == nil {
		return nil, errors.New("measure: the outcome has no store to read its runs from")
	}
	srcs := make([]stored.Source, len(o.Targets))
	for i, t := range o.Targets {
		srcs[i] = stored.Source{Commit: t.Target.Commit, Variant: t.Target.Variant.Name,
			Layouts: []string{VariantID(t.Target.Variant)}, Round: o.round()}
	}
	return stored.Table(ctx, o.st, o.jobKey, srcs, alpha)
}

// round selects the runs of a column: the outcome's rounds with
// WholeRounds, else every run.
func (o *Outcome) round() func(int) (int, bool) {
	if o.whole {
		return stored.InRounds(o.Rounds)
	}
	return func(run int) (int, bool) { return run, true }
}
