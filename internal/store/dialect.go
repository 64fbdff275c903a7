package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/stdlib"
)

// dialect is the SQL database a Store keeps its tables in. The store's
// statements are written once, with ? placeholders, which a PostgreSQL
// store's connections rebind (see rebinding). What else differs (schema,
// migrations, locking, errors) is in the files of each dialect: schema.go
// and badstore.go for SQLite, postgres.go, schema_postgres.go and
// migrate_postgres.go for PostgreSQL.
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
// quoted string or identifier is left alone; a statement for PostgreSQL
// cannot use the jsonb operators spelled with ? (none of the store's
// does).
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

// rebinding is the database/sql connector of a PostgreSQL store: its
// connections are pgx's, and take statements with ? placeholders, which
// they rebind. So the store's SQL, and any statement a later method adds,
// is written once for both databases.
type rebinding struct{ driver.Connector }

func (c rebinding) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return rebindConn{conn.(*stdlib.Conn)}, nil
}

// rebindConn is a pgx connection whose statements are rebound. Its other
// methods, and so the optional interfaces database/sql looks for (begin
// with options, ping, session reset, pgx's own argument types), are the
// pgx connection's.
type rebindConn struct{ *stdlib.Conn }

func (c rebindConn) Prepare(q string) (driver.Stmt, error) {
	return c.Conn.Prepare(postgresDB.bind(q))
}

func (c rebindConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, postgresDB.bind(q))
}

func (c rebindConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, postgresDB.bind(q), args)
}

func (c rebindConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, postgresDB.bind(q), args)
}
