package fleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestCollectBlobs: on a real PostgreSQL with the fleet's and the results
// store's tables, the collection removes (with their chunks) exactly the
// old blobs nothing refers to, and keeps a build record's log and
// artifact, a stored run's stdout and stderr, a queued job's knob file,
// and a blob reused (stored again) since.
func TestCollectBlobs(t *testing.T) {
	ctx := context.Background()
	url := testutil.Postgres(t)
	pool, err := Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	results, err := OpenResults(ctx, url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer results.Close()
	put := func(what string) string {
		t.Helper()
		h, err := putBlob(ctx, pool, []byte(what+" "+string(make([]byte, blobChunk)))) // two chunks each
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	names := []string{"build log", "artifact", "stdout", "stderr", "knob file", "orphan", "reused", "fresh orphan"}
	sha := map[string]string{}
	for _, n := range names {
		sha[n] = put(n)
	}
	if _, err := pool.Exec(ctx, `UPDATE perfbot_fleet_blobs SET stored = now() - interval '2 days' WHERE sha256 <> $1`, sha["fresh orphan"]); err != nil {
		t.Fatal(err)
	}
	if _, err := putBuild(ctx, pool, &fleetBuild{Key: "k1", Commit: "c1", Class: "test", Machine: "m1", Status: "ok",
		LogSHA: sha["build log"], Artifacts: map[string]string{"bench": sha["artifact"]}}); err != nil {
		t.Fatal(err)
	}
	if err := results.PutRun(ctx, &store.RunRecord{RunKey: store.RunKey{Job: "j", Commit: "c1", Index: 1}, Status: store.RunOK,
		StdoutPath: BlobPrefix + sha["stdout"], StderrPath: BlobPrefix + sha["stderr"]}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, priority)
		VALUES ($1, 'perfbot.build', 1, 'test', 'available', 1)`, fmt.Sprintf(`{"knobs": {"files": [{"sha": %q}]}}`, sha["knob file"])); err != nil {
		t.Fatal(err)
	}
	if _, err := putBlob(ctx, pool, []byte("reused "+string(make([]byte, blobChunk)))); err != nil {
		t.Fatal(err)
	}

	got, err := CollectBlobs(ctx, pool, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got.Removed != 1 || got.Kept != len(names)-1 {
		t.Errorf("%s; want the one old orphan removed, %d kept", got, len(names)-1)
	}
	for _, n := range names {
		have, err := hasBlob(ctx, pool, sha[n])
		if err != nil {
			t.Fatal(err)
		}
		if have != (n != "orphan") {
			t.Errorf("blob of the %s: stored %v after the collection", n, have)
		}
	}
	var chunks int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM perfbot_fleet_blob_chunks WHERE sha256 = $1`, sha["orphan"]).Scan(&chunks); err != nil || chunks != 0 {
		t.Errorf("the removed blob's chunks: %d left (%v)", chunks, err)
	}
}
