package fleet

// Run numbers claimed by the measurements of the fleet's orchestrations.

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// Reserve claims run numbers for a measurement's session in the fleet's
// database (measure.Reserver): one claim per run key, held by one session;
// a claim already held by session, or by the session of the stored run it
// retakes, passes to it. The statements run in one batch, each atomic, so
// two orchestrations (of this server or another) never both get a run.
func (r *Remote) Reserve(ctx context.Context, session string, claims []measure.Claim) ([]bool, error) {
	b := &pgx.Batch{}
	for _, c := range claims {
		b.Queue(`INSERT INTO perfbot_fleet_claims AS c (job, commit_hash, variant, idx, session, claimed)
			VALUES ($1, $2, $3, $4, $5, now())
			ON CONFLICT (job, commit_hash, variant, idx) DO UPDATE SET session = $5, claimed = now()
			WHERE c.session = $5 OR ($6 <> '' AND c.session = $6)
			RETURNING idx`, c.Key.Job, c.Key.Commit, c.Key.Variant, c.Key.Index, session, c.Retake)
	}
	res := r.c.Pool.SendBatch(ctx, b)
	defer res.Close()
	ok := make([]bool, len(claims))
	for i := range claims {
		var idx int
		err := res.QueryRow().Scan(&idx)
		switch {
		case err == nil:
			ok[i] = true
		case errors.Is(err, pgx.ErrNoRows):
		default:
			return nil, err
		}
	}
	return ok, res.Close()
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
