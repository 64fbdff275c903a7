package fleet_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestGCCommandBlobs: perfbot gc --db (the real binary) removes an old
// blob nothing refers to and says so; a blob within --grace stays.
func TestGCCommandBlobs(t *testing.T) {
	ctx := context.Background()
	url := testutil.Postgres(t)
	pool, err := fleet.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := fleet.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	results, err := fleet.OpenResults(ctx, url, filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	results.Close()
	// Two blobs in the form from before chunks (the bytes in the row).
	if _, err := pool.Exec(ctx, `INSERT INTO perfbot_fleet_blobs (sha256, size, data, stored) VALUES
		('old', 3, 'old', now() - interval '3 hours'), ('new', 3, 'new', now())`); err != nil {
		t.Fatal(err)
	}
	bin, err := perfbotBinary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "gc", "--db", url, "--grace", "1h").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "removed 1 fleet blobs") || !strings.Contains(string(out), "1 kept") {
		t.Fatalf("perfbot gc --db: %v\n%s", err, out)
	}
	var left []string
	rows, _ := pool.Query(ctx, `SELECT sha256 FROM perfbot_fleet_blobs`)
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		left = append(left, s)
	}
	if len(left) != 1 || left[0] != "new" {
		t.Errorf("blobs left: %v, want the new one", left)
	}
}
