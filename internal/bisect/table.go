package bisect

import (
	"context"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/compare/stored"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// checkTable is the 0-day table of parent vs culprit over every metric,
// from the check's fresh interleaved runs of each under the variants.
func checkTable(ctx context.Context, st *store.Store, j *job.Job, res *Result, variants []job.Variant) (*compare.Table, error) {
	var ids []string
	for _, v := range variants {
		ids = append(ids, measure.VariantID(v))
	}
	name := ""
	if len(variants) == 1 {
		name = variants[0].Name
	}
	srcs := []stored.Source{
		{Commit: *res.Parent, Variant: name, Layouts: ids, Round: stored.Within(res.Check.ParentRuns[0], res.Check.ParentRuns[1])},
		{Commit: *res.Culprit, Variant: name, Layouts: ids, Round: stored.Within(res.Check.CulpritRuns[0], res.Check.CulpritRuns[1])},
	}
	return stored.Table(ctx, st, j.Key(), srcs, compare.DefaultAlpha)
}
