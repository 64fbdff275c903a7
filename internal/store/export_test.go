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

// PostgresDB exposes pgOpenDB: a pool on the database at url whose
// sessions see schema first, and whose statements take ? placeholders.
var PostgresDB = pgOpenDB

// MigratePostgresTo builds perfbot's schema in the database at url (open
// as db, see PostgresDB) up to version.
func MigratePostgresTo(ctx context.Context, db *sql.DB, url, schema string, version int) error {
	_, err := migratePostgres(ctx, db, url, schema, version)
	return err
}

func TestSchemaVersionIsLastMigration(t *testing.T) {
	t.Parallel()
	if SchemaVersion != len(migrations)-1 {
		t.Errorf("SchemaVersion = %d, but there are %d migrations", SchemaVersion, len(migrations)-1)
	}
	if len(migrations[0]) != 0 {
		t.Error("migrations[0] must be empty: version 0 is the empty database")
	}
}
