package fleet

// Run numbers claimed by the measurements of the fleet's orchestrations.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
//
// A claim locks its row until the transaction ends, so the claims are
// made in the order of their keys, whatever order the caller lists them
// in: two transactions that want some of the same rows then never wait
// for each other both ways. A deadlock PostgreSQL reports all the same
// (40P01: a server of an older perfbot beside this one) is retried a few
// times.
func (r *Remote) Reserve(ctx context.Context, session string, groups [][]measure.Claim) ([]bool, error) {
	take := make([]bool, len(groups))
	for g := range take {
		take[g] = true
	}
	for {
		var refused []int
		err := r.c.retryDeadlock(ctx, "claiming run numbers", func() (err error) {
			refused, err = r.c.claimAll(ctx, session, groups, take)
			return err
		})
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
// transaction, in the order of their keys. It commits when every claim was
// granted; otherwise it rolls back and returns the groups refused.
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
	slices.SortStableFunc(all, func(a, b claim) int { return compareKeys(a.Key, b.Key) })
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
// measurement of run numbers asked for by number (a bisection's). The
// rows are deleted in the order of their keys, as Reserve claims them.
func (c *Client) unclaim(ctx context.Context, rows ...[]byte) error {
	type mine struct {
		key     store.RunKey
		session string
	}
	var keys []mine
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
			keys = append(keys, mine{store.RunKey{Job: j.Key(), Commit: s.Commit, Variant: measure.VariantID(s.Variant), Index: s.Index}, a.Session})
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.SortStableFunc(keys, func(a, b mine) int { return compareKeys(a.key, b.key) })
	b := &pgx.Batch{}
	for _, k := range keys {
		b.Queue(`DELETE FROM perfbot_fleet_claims WHERE job = $1 AND commit_hash = $2 AND variant = $3 AND idx = $4 AND session = $5`,
			k.key.Job, k.key.Commit, k.key.Variant, k.key.Index, k.session)
	}
	return c.retryDeadlock(ctx, "giving up run numbers", func() error { return c.Pool.SendBatch(ctx, b).Close() })
}

// compareKeys orders run keys by job, commit, variant and run number: the
// one order every process of the fleet claims and gives up rows in (any
// order does, as long as it is the same everywhere).
func compareKeys(a, b store.RunKey) int {
	return cmp.Or(strings.Compare(a.Job, b.Job), strings.Compare(a.Commit, b.Commit),
		strings.Compare(a.Variant, b.Variant), cmp.Compare(a.Index, b.Index))
}

// deadlockDetected is PostgreSQL's SQLSTATE for a transaction aborted to
// break a deadlock.
const deadlockDetected = "40P01"

// deadlockTries is how often a claim statement PostgreSQL aborts as a
// deadlock is tried in all.
const deadlockTries = 5

// retryDeadlock runs f, again (after a short random pause) while it fails
// with PostgreSQL's deadlock_detected, at most deadlockTries times.
func (c *Client) retryDeadlock(ctx context.Context, what string, f func() error) error {
	for try := 1; ; try++ {
		err := f()
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != deadlockDetected || try == deadlockTries {
			return err
		}
		c.Log("%s: %v; trying again (%d of %d)", what, err, try+1, deadlockTries)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rand.Int64N(int64(50 * time.Millisecond)))):
		}
	}
}
