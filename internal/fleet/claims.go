package fleet

// Run numbers claimed by the measurements of the fleet's orchestrations.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// Reserve claims run numbers for a measurement's session in the fleet's
// database (measure.Reserver): one claim per run key, held by one session;
// a claim already held by session, or by the session of the stored run it
// retakes, passes to it. Each group is claimed all or none: the claims go
// in one transaction that is committed only when every group in it was
// granted; when one was refused the transaction is rolled back and the
// other groups are claimed again without it, so a refused group keeps no
// claim (a whole round skipped would otherwise hold its other targets'
// run numbers for good).
func (r *Remote) Reserve(ctx context.Context, session string, groups [][]measure.Claim) ([]bool, error) {
	take := make([]bool, len(groups))
	for g := range take {
		take[g] = true
	}
	for {
		refused, err := r.c.claimAll(ctx, session, groups, take)
		if err != nil {
			return nil, err
		}
		if len(refused) == 0 {
			return take, nil
		}
		for _, g := range refused {
			take[g] = false
		}
	}
}

// claimAll claims the groups marked in take for session in one
// transaction. It commits when every claim was granted; otherwise it rolls
// back and returns the groups refused.
func (c *Client) claimAll(ctx context.Context, session string, groups [][]measure.Claim, take []bool) ([]int, error) {
	type claim struct {
		group int
		measure.Claim
	}
	var all []claim
	for g, cs := range groups {
		if take[g] {
			for _, c := range cs {
				all = append(all, claim{g, c})
			}
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	tx, err := c.Pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it does nothing
	b := &pgx.Batch{}
	for _, c := range all {
		b.Queue(`INSERT INTO perfbot_fleet_claims AS c (job, commit_hash, variant, idx, session, claimed)
			VALUES ($1, $2, $3, $4, $5, now())
			ON CONFLICT (job, commit_hash, variant, idx) DO UPDATE SET session = $5, claimed = now()
			WHERE c.session = $5 OR ($6 <> '' AND c.session = $6)
			RETURNING idx`, c.Key.Job, c.Key.Commit, c.Key.Variant, c.Key.Index, session, c.Retake)
	}
	res := tx.SendBatch(ctx, b)
	var refused []int
	for _, c := range all {
		var idx int
		err := res.QueryRow().Scan(&idx)
		switch {
		case err == nil:
		case errors.Is(err, pgx.ErrNoRows):
			if !slices.Contains(refused, c.group) {
				refused = append(refused, c.group)
			}
		default:
			res.Close()
			return nil, err
		}
	}
	if err := res.Close(); err != nil {
		return nil, err
	}
	if len(refused) > 0 {
		return refused, nil
	}
	return nil, tx.Commit(ctx)
}

// unclaim gives up the claims of the round jobs rows (withdrawn, or
// failed), so that the run numbers they held can be taken by a later
// measurement of run numbers asked for by number (a bisection's).
func (c *Client) unclaim(ctx context.Context, rows ...[]byte) error {
	b := &pgx.Batch{}
	for _, raw := range rows {
		var a RoundArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return err
		}
		j, err := a.Job.Load()
		if err != nil {
			return err
		}
		for _, s := range a.Slots {
			if s.Index == 0 {
				continue
			}
			k := store.RunKey{Job: j.Key(), Commit: s.Commit, Variant: measure.VariantID(s.Variant), Index: s.Index}
			b.Queue(`DELETE FROM perfbot_fleet_claims WHERE job = $1 AND commit_hash = $2 AND variant = $3 AND idx = $4 AND session = $5`,
				k.Job, k.Commit, k.Variant, k.Index, a.Session)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	return c.Pool.SendBatch(ctx, b).Close()
}
