package fleet

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestFirstBuildWins: a second build of a key (another machine, another
// job file path) does not replace the first successful one, neither with
// other bytes nor with a failure; and a round's slot restores the
// artifacts it was planned with even when the fleet's record says
// otherwise.
func TestFirstBuildWins(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	blob := func(s string) string {
		h, err := putBlob(ctx, pool, []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	first, second := blob("binary built on m1"), blob("binary built on m2, another timestamp")
	b := &fleetBuild{Key: "k1", Commit: "c0ffee", Class: "x", Machine: "m1", Status: string(store.BuildOK), Artifacts: map[string]string{"bench": first}}
	got, err := putBuild(ctx, pool, b)
	if err != nil || got.Artifacts["bench"] != first {
		t.Fatalf("first build: %+v, %v", got, err)
	}
	for _, again := range []*fleetBuild{
		{Key: "k1", Commit: "c0ffee", Class: "x", Machine: "m2", Status: string(store.BuildOK), Artifacts: map[string]string{"bench": second}},
		{Key: "k1", Commit: "c0ffee", Class: "x", Machine: "m3", Status: string(store.BuildFailed), Error: "out of disk", Artifacts: map[string]string{}},
	} {
		got, err := putBuild(ctx, pool, again)
		if err != nil {
			t.Fatal(err)
		}
		if got.Machine != "m1" || got.Status != string(store.BuildOK) || got.Artifacts["bench"] != first {
			t.Errorf("after a build on %s (%s) the record is %s's, %s, bench %.8s: want m1's, ok, %.8s", again.Machine, again.Status, got.Machine, got.Status, got.Artifacts["bench"], first)
		}
	}
	// A failed record is replaced by a later success.
	if _, err := putBuild(ctx, pool, &fleetBuild{Key: "k2", Commit: "c0ffee", Class: "x", Machine: "m1", Status: string(store.BuildFailed), Artifacts: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	if got, err := putBuild(ctx, pool, &fleetBuild{Key: "k2", Commit: "c0ffee", Class: "x", Machine: "m2", Status: string(store.BuildOK), Artifacts: map[string]string{"bench": second}}); err != nil || got.Status != string(store.BuildOK) {
		t.Errorf("a failed record stays after a success: %+v, %v", got, err)
	}

	// A slot planned with the first build's hashes runs those bytes, even
	// if the record were another's (as an older server could leave it).
	if _, err := pool.Exec(ctx, `UPDATE perfbot_fleet_builds SET artifacts = $1 WHERE key = 'k1'`, map[string]string{"bench": second}); err != nil {
		t.Fatal(err)
	}
	ws, err := openWorkspace(t.TempDir(), pool)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, want := range []string{"binary built on m1", "binary built on m2, another timestamp"} {
		arts := map[string]string{"bench": first}
		if want != "binary built on m1" {
			arts = nil // no hashes in the slot: the record's
		}
		rec, err := ws.artifacts(ctx, "k1", arts)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(rec.ArtifactDir, "bench"))
		if err != nil || string(data) != want {
			t.Errorf("restored %q (%v), want %q", data, err, want)
		}
	}
}

// migratedPool connects to a fresh PostgreSQL database with the fleet's
// schema, closed when the test ends.
func migratedPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := Connect(ctx, testutil.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return pool
}
