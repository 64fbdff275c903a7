package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// dialect is the SQL database a Store keeps its tables in. The store's
// statements are written once, with ? placeholders; txn rebinds them for
// the dialect. What else differs (schema, migrations, locking, errors) is
// in the files of each dialect: schema.go and badstore.go for SQLite,
// postgres.go and schema_postgres.go for PostgreSQL.
type dialect int

const (
	sqliteDB   dialect = iota // modernc.org/sqlite, one file in a .perfbot folder
	postgresDB                // PostgreSQL through pgx, in a schema of its own
)

func (d dialect) String() string {
	switch d {
	case sqliteDB:
		return "SQLite"
	case postgresDB:
		return "PostgreSQL"
	}
	return "dialect(" + strconv.Itoa(int(d)) + ")"
}

// bind returns q with its ? placeholders written as the dialect wants
// them: unchanged for SQLite, $1, $2, ... for PostgreSQL. A ? inside a
// quoted string or identifier is left alone.
func (d dialect) bind(q string) string {
	if d != postgresDB || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + len(q)/8)
	n := 0
	var quote byte // the open quote character, 0 outside quotes
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0 // a doubled quote closes and reopens: same result
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// readTx is the options of a read transaction: one consistent snapshot.
// SQLite's deferred read transaction is one; PostgreSQL's default (READ
// COMMITTED) takes a snapshot per statement, so Runs could read a run and
// then values of a run it did not read: REPEATABLE READ takes one snapshot
// for the transaction, and a read-only one never fails to serialize.
func (d dialect) readTx() *sql.TxOptions {
	if d == postgresDB {
		return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return &sql.TxOptions{ReadOnly: true}
}

// txn is a transaction whose statements are written with ? placeholders
// and rebound for its dialect.
type txn struct {
	tx *sql.Tx
	d  dialect
}

func (t txn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, t.d.bind(q), args...)
}

func (t txn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, t.d.bind(q), args...)
}

func (t txn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, t.d.bind(q), args...)
}

func (t txn) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return t.tx.PrepareContext(ctx, t.d.bind(q))
}
