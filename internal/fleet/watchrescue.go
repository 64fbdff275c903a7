package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// A watch cycle's server holds the cycle's liveness lock, a session
// advisory lock ("pfbl", the job's id) on a connection of its own, while
// it works the cycle: PostgreSQL frees it the moment that server dies (its
// connection closes), so a cycle whose lock is free while River says it
// runs has lost its server. Every server looks for such cycles every
// WatchRescueEvery and makes one available again when two looks in a row
// find it so, to resume from the store on a live server: River's rescuer
// would wait for the cycle's lease (an hour: a cycle may measure for
// long). Builds and rounds are rescued their own way (their machines'
// heartbeats: machines.go).
const watchLiveClass = 0x7066626c

// WatchRescueEvery is how often a server looks for cycles whose server
// died; WatchRescueGrace is how long a cycle may run before its server
// takes its liveness lock (the cycle is not judged before).
const (
	WatchRescueEvery = 5 * time.Second
	WatchRescueGrace = 10 * time.Second
)

// liveKey is the second key of job id's liveness lock.
func liveKey(id int64) int32 { return int32(id % (1 << 31)) }

// holdLive takes job id's liveness lock on a connection of its own,
// pinged every period; false when another server holds it (the cycle is
// being worked there).
func holdLive(ctx context.Context, pool *pgxpool.Pool, id int64, period time.Duration) (*heldLock, bool, error) {
	return tryLock(ctx, pool, watchLiveClass, liveKey(id), period)
}

// suspects are the watch cycles one look found running with their
// liveness lock free, by job id, with the attempt it saw.
type suspects map[int64]int

// rescueWatches makes available again the running watch cycles whose
// server is gone (their liveness lock is free), and says which. A cycle is
// queued again only when two looks in a row (last, the suspects of the
// look before, and this one) find the same attempt running with its lock
// free: a cycle's server lets go of the lock as the cycle ends, and River
// records the end a moment later (a failed attempt becomes retryable,
// with River's backoff), so a single look can fall in between. The
// suspects of this look come back for the next.
func rescueWatches(ctx context.Context, pool *pgxpool.Pool, c *river.Client[pgx.Tx], last suspects) ([]int64, suspects, error) {
	res, err := c.JobList(ctx, river.NewJobListParams().Kinds(WatchArgs{}.Kind()).States(rivertype.JobStateRunning).First(100))
	if err != nil {
		return nil, last, err
	}
	var out []int64
	next := suspects{}
	for _, row := range res.Jobs {
		if row.AttemptedAt == nil || time.Since(*row.AttemptedAt) < WatchRescueGrace {
			continue
		}
		lock, free, err := holdLive(ctx, pool, row.ID, 0)
		if err != nil {
			return out, next, err
		}
		if !free {
			continue
		}
		// A cycle that stored its outcome has finished: River completes
		// it in a moment. Only when it stays running (its server died
		// before River recorded the end) is it queued again, and the next
		// attempt returns the stored outcome.
		var stored time.Time
		err = pool.QueryRow(ctx, `SELECT stored FROM perfbot_fleet_watch_outputs WHERE job_id = $1`, row.ID).Scan(&stored)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			lock.Release()
			return out, next, err
		case time.Since(stored) < WatchRescueGrace:
			lock.Release()
			continue
		}
		if a, ok := last[row.ID]; !ok || a != row.Attempt {
			lock.Release()
			next[row.ID] = row.Attempt
			continue
		}
		// Under the lock, so that no server starts it meanwhile; River's
		// rescuer moves a stuck job the same way (running to retryable),
		// and its scheduler makes it available. Only the attempt judged
		// here: a retry started since the list was read may not hold its
		// lock yet.
		tag, err := pool.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now(),
			errors = array_append(errors, $2::jsonb) WHERE id = $1 AND state = 'running' AND attempt = $3`, row.ID,
			fmt.Sprintf(`{"at": %q, "attempt": %d, "error": "its server is gone (its liveness lock was free): queued again"}`,
				time.Now().UTC().Format(time.RFC3339Nano), row.Attempt), row.Attempt)
		lock.Release()
		if err != nil {
			return out, next, err
		}
		if tag.RowsAffected() == 1 {
			out = append(out, row.ID)
		}
	}
	return out, next, nil
}

// storeWatchOutput keeps cycle id's outcome in the store; the first
// stored stands.
func storeWatchOutput(ctx context.Context, pool *pgxpool.Pool, id int64, out WatchOutput) error {
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, `INSERT INTO perfbot_fleet_watch_outputs (job_id, output, stored) VALUES ($1, $2, now())
		ON CONFLICT (job_id) DO NOTHING`, id, data)
	if err != nil {
		return fmt.Errorf("storing the outcome of watch cycle %d: %w", id, err)
	}
	return nil
}

// storedWatchOutput is cycle id's stored outcome, if an attempt stored
// one.
func storedWatchOutput(ctx context.Context, pool *pgxpool.Pool, id int64) (WatchOutput, bool, error) {
	var out WatchOutput
	var data []byte
	err := pool.QueryRow(ctx, `SELECT output FROM perfbot_fleet_watch_outputs WHERE job_id = $1`, id).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return out, false, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &out)
	}
	if err != nil {
		return out, false, fmt.Errorf("the stored outcome of watch cycle %d: %w", id, err)
	}
	return out, true, nil
}

// dropWatchOutputs deletes the outcomes of cycles River no longer holds
// (its cleaner removes finished jobs after a day).
func dropWatchOutputs(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := pool.Exec(ctx, `DELETE FROM perfbot_fleet_watch_outputs o
		WHERE o.stored < now() - interval '1 hour' AND NOT EXISTS (SELECT 1 FROM river_job j WHERE j.id = o.job_id)`)
	return err
}

// rescueLoop runs rescueWatches every WatchRescueEvery until stopped.
type rescueLoop struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (l *rescueLoop) start(s *Server) {
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		t := time.NewTicker(WatchRescueEvery)
		defer t.Stop()
		var seen suspects
		for {
			var ids []int64
			var err error
			ids, seen, err = rescueWatches(ctx, s.cfg.Pool, s.River, seen)
			if err != nil && !errors.Is(err, context.Canceled) {
				s.cfg.Log("watch cycles: looking for those whose server is gone: %v", err)
			}
			if err := dropWatchOutputs(ctx, s.cfg.Pool); err != nil && !errors.Is(err, context.Canceled) {
				s.cfg.Log("watch cycles: dropping the outcomes of those River no longer holds: %v", err)
			}
			for _, id := range ids {
				s.cfg.Log("watch cycle job %d: its server is gone; queued again, to resume from what is stored", id)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

func (l *rescueLoop) stop() {
	if l.cancel != nil {
		l.cancel()
		l.wg.Wait()
	}
}
