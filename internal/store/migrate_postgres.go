package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// versionTable is the table, in perfbot's schema, that marks the schema as
// perfbot's and holds its version: one row (application 'perfbot',
// version). It plays the part of SQLite's application_id and user_version.
const versionTable = "schema_version"

// migratePostgres brings perfbot's schema in db to version target,
// creating it when missing, in one transaction. The transaction first
// takes an advisory lock on the schema's name, so processes opening one
// database at once wait for each other: one creates or migrates, the
// others find it done. It also checks that the connection may write the
// tables. desc names the database in errors; created reports whether the
// schema was new (no perfbot version) and this call initialised it.
func migratePostgres(ctx context.Context, db *sql.DB, desc, schema string, target int) (created bool, err error) {
	fail := func(err error) (bool, error) { return false, fmt.Errorf("store: open %s: %w", desc, err) }
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?, hashtext(?))`, migrateLockClass, schema); err != nil {
		return fail(fmt.Errorf("waiting for other processes opening the store: %w", err))
	}
	version, err := pgSchemaVersion(ctx, tx, desc, schema)
	if err != nil {
		return false, err
	}
	if version < target {
		q := pgx.Identifier{schema}.Sanitize()
		var stmts []string
		if version == 0 {
			stmts = append(stmts, `CREATE SCHEMA IF NOT EXISTS `+q,
				`CREATE TABLE `+q+`.`+versionTable+` (application TEXT NOT NULL, version BIGINT NOT NULL)`,
				`INSERT INTO `+q+`.`+versionTable+` VALUES ('perfbot', 0)`)
		}
		for _, stmt := range stmts {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fail(fmt.Errorf("creating schema %s: %w", schema, err))
			}
		}
		for v := version + 1; v <= target; v++ {
			for i, stmt := range pgMigrations[v] {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fail(fmt.Errorf("migrating to schema version %d, step %d: %w", v, i+1, err))
				}
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+q+`.`+versionTable+` SET version = ?`, target); err != nil {
			return fail(err)
		}
	}
	if err := pgCheckWritable(ctx, tx, desc, schema); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return fail(fmt.Errorf("migrating to schema version %d: %w", target, err))
	}
	return version == 0 && target > 0, nil
}

// pgSchemaVersion returns the version of perfbot's schema: 0 when the
// schema does not exist or is empty, an error wrapping ErrNotPerfbot when
// it holds something else, or ErrNewerSchema when this perfbot does not
// know its version.
func pgSchemaVersion(ctx context.Context, tx *sql.Tx, desc, schema string) (int, error) {
	var objects, marks int
	err := tx.QueryRowContext(ctx, `
		SELECT count(*), count(*) FILTER (WHERE c.relname = ? AND c.relkind = 'r')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = ?`, versionTable, schema).Scan(&objects, &marks)
	if err != nil {
		return 0, fmt.Errorf("store: open %s: %w", desc, err)
	}
	switch {
	case objects == 0:
		return 0, nil
	case marks == 0:
		return 0, fmt.Errorf("store: open %s: %w: schema %s holds %d relations (tables, indexes, sequences) of another program and no %s table; name another schema for perfbot's tables",
			desc, ErrNotPerfbot, schema, objects, versionTable)
	}
	rows, err := tx.QueryContext(ctx, `SELECT application, version FROM `+pgx.Identifier{schema, versionTable}.Sanitize())
	if err != nil {
		return 0, fmt.Errorf("store: open %s: %w", desc, err)
	}
	defer rows.Close()
	var apps []string
	version := 0
	for rows.Next() {
		var app string
		if err := rows.Scan(&app, &version); err != nil {
			return 0, fmt.Errorf("store: open %s: %s: %w", desc, versionTable, err)
		}
		apps = append(apps, app)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: open %s: %w", desc, err)
	}
	switch {
	case len(apps) != 1 || apps[0] != "perfbot":
		return 0, fmt.Errorf("store: open %s: %w (its %s table holds %q, not one row of perfbot's)", desc, ErrNotPerfbot, versionTable, apps)
	case version > SchemaVersion:
		return 0, fmt.Errorf("store: open %s: %w: it has schema version %d, this perfbot knows up to %d; use a newer perfbot or another schema",
			desc, ErrNewerSchema, version, SchemaVersion)
	case version < 0:
		return 0, fmt.Errorf("store: open %s: %w (schema version %d)", desc, ErrNotPerfbot, version)
	}
	return version, nil
}

// pgCheckWritable returns an error wrapping ErrReadOnly when this
// connection cannot write perfbot's tables: a standby server, transactions
// read-only by default, or a role without the privileges.
func pgCheckWritable(ctx context.Context, tx *sql.Tx, desc, schema string) error {
	var readOnly string
	var standby, usage bool
	if err := tx.QueryRowContext(ctx, `SELECT current_setting('transaction_read_only'), pg_is_in_recovery(), has_schema_privilege(?, 'USAGE')`, schema).
		Scan(&readOnly, &standby, &usage); err != nil {
		return fmt.Errorf("store: open %s: %w", desc, err)
	}
	switch {
	case standby:
		return pgReadOnlyError(desc, "the server is a standby")
	case readOnly == "on":
		return pgReadOnlyError(desc, "transactions are read-only (default_transaction_read_only)")
	case !usage:
		return pgReadOnlyError(desc, "the role may not use schema "+schema)
	}
	rows, err := tx.QueryContext(ctx, `
		SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = ? AND c.relkind = 'r' AND NOT (has_table_privilege(c.oid, 'SELECT')
			AND has_table_privilege(c.oid, 'INSERT') AND has_table_privilege(c.oid, 'UPDATE')
			AND has_table_privilege(c.oid, 'DELETE'))
		ORDER BY c.relname`, schema)
	if err != nil {
		return fmt.Errorf("store: open %s: %w", desc, err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return fmt.Errorf("store: open %s: %w", desc, err)
		}
		tables = append(tables, t)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: open %s: %w", desc, err)
	}
	if len(tables) > 0 {
		return pgReadOnlyError(desc, "the role may not read, insert, update and delete in "+strings.Join(tables, ", "))
	}
	return nil
}

func pgReadOnlyError(desc, why string) error {
	return fmt.Errorf("store %s is %w (%s): perfbot records every build and run there; connect to the primary server as a role that may create and write perfbot's schema, or name another database",
		desc, ErrReadOnly, why)
}

// badPostgres is badSQLite for PostgreSQL: the error to report for err,
// which happened while doing what with the database desc, when the server
// says the database is read-only for this connection or damaged;
// otherwise nil.
func badPostgres(desc, what string, err error) error {
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrReadOnly) {
		return err
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return nil
	}
	switch pe.Code {
	case "25006", // read_only_sql_transaction
		"42501": // insufficient_privilege
		return pgReadOnlyError(desc, what+": "+pe.Message)
	case "XX001", // data_corrupted
		"XX002": // index_corrupted
		return fmt.Errorf("store %s: %w: %w (%s); restore the database from a backup (PostgreSQL's amcheck tells what is damaged; REINDEX repairs a damaged index); the runs' raw logs are kept in their folders",
			desc, ErrCorrupt, pe, what)
	}
	return nil
}
