package testutil

import (
	"context"
	"database/sql"
	"os"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(RunWithPostgres(m)) }

// TestPostgres: two calls give two distinct, empty, writable databases on
// a real server.
func TestPostgres(t *testing.T) {
	a, b := Postgres(t), Postgres(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	ctx := context.Background()
	for _, url := range []string{a, b} {
		db, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, "CREATE TABLE x (v int)"); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO x VALUES (42)"); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM x").Scan(&n); err != nil || n != 1 {
			t.Fatalf("%s: count = %d, %v; want 1 (databases must not share tables)", url, n, err)
		}
	}
}
