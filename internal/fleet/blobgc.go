package fleet

// The collection of blobs nothing refers to any more.

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/perfbot/perfbot/internal/store"
)

// DefaultBlobGrace is how long a blob is kept after it was last stored or
// reused, whatever refers to it: an upload whose record is not written
// yet, a knob file a queued build will fetch, are not collected under
// their writer.
const DefaultBlobGrace = 24 * time.Hour

// BlobGC is what a collection of the fleet's blobs did.
type BlobGC struct {
	Removed int   // blobs removed
	Bytes   int64 // their size
	Kept    int   // blobs left
}

func (g BlobGC) String() string {
	return fmt.Sprintf("removed %d fleet blobs (%.1f MiB) nothing refers to; %d kept", g.Removed, float64(g.Bytes)/(1<<20), g.Kept)
}

// CollectBlobs removes the fleet's blobs (and their chunks) that were
// stored or reused more than grace ago (DefaultBlobGrace when zero) and
// that nothing refers to: not a build record of the fleet (its log and
// artifacts: what layout diffs, triage and the rounds read), not a run of
// the results store (its stdout and stderr), not a build or watch build
// of the results store (its log), not an unfinished River job (a knob
// file a queued variant build names). Build records are never removed, so
// every stored build's artifacts stay.
func CollectBlobs(ctx context.Context, pool *pgxpool.Pool, grace time.Duration) (BlobGC, error) {
	if grace <= 0 {
		grace = DefaultBlobGrace
	}
	var g BlobGC
	results := pgx.Identifier{store.DefaultSchema}.Sanitize()
	rows, err := pool.Query(ctx, `WITH ref AS (
		SELECT log_sha256 AS sha FROM perfbot_fleet_builds
		UNION SELECT a.value FROM perfbot_fleet_builds b, jsonb_each_text(b.artifacts) a
		UNION SELECT substr(stdout_path, $2) FROM `+results+`.runs WHERE stdout_path LIKE $3
		UNION SELECT substr(stderr_path, $2) FROM `+results+`.runs WHERE stderr_path LIKE $3
		UNION SELECT substr(log_path, $2) FROM `+results+`.builds WHERE log_path LIKE $3
		UNION SELECT substr(log_path, $2) FROM `+results+`.watch_builds WHERE log_path LIKE $3
	)
	DELETE FROM perfbot_fleet_blobs b
	WHERE b.stored < now() - make_interval(secs => $1)
		AND NOT EXISTS (SELECT 1 FROM ref WHERE ref.sha = b.sha256)
		AND NOT EXISTS (SELECT 1 FROM river_job j WHERE j.state NOT IN ('completed', 'cancelled', 'discarded')
			AND strpos(j.args::text, b.sha256) > 0)
	RETURNING b.size`, grace.Seconds(), len(BlobPrefix)+1, BlobPrefix+"%")
	if err != nil {
		return g, fmt.Errorf("collecting fleet blobs: %w", err)
	}
	for rows.Next() {
		var size int64
		if err := rows.Scan(&size); err != nil {
			rows.Close()
			return g, err
		}
		g.Removed++
		g.Bytes += size
	}
	if err := rows.Err(); err != nil {
		return g, fmt.Errorf("collecting fleet blobs: %w", err)
	}
	err = pool.QueryRow(ctx, `SELECT count(*) FROM perfbot_fleet_blobs`).Scan(&g.Kept)
	return g, err
}
