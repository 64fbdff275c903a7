package store

import (
	"context"
	"database/sql"
	"testing"
)

// MigrateTo exposes migrateTo, to build databases of older schema versions.
func MigrateTo(ctx context.Context, db *sql.DB, path string, version int) error {
	_, err := migrateTo(ctx, db, path, version)
	return err
}

// DSN exposes dsn.
var DSN = dsn

func TestSchemaVersionIsLastMigration(t *testing.T) {
	t.Parallel()
	if SchemaVersion != len(migrations)-1 {
		t.Errorf("SchemaVersion = %d, but there are %d migrations", SchemaVersion, len(migrations)-1)
	}
	if len(migrations[0]) != 0 {
		t.Error("migrations[0] must be empty: version 0 is the empty database")
	}
}
