package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/store/storetest"
	"github.com/perfbot/perfbot/internal/testutil"
)

// Tests of the PostgreSQL store beyond the conformance suite: what Open
// makes of the database, the schema and the folders.

// postgresBackend is the PostgreSQL store in a fresh schema (Options.Schema)
// of a database whose default collation is ICU's en-US, as on a server set
// up with a usual locale (testutil's own server is initialised with the C
// locale, whose order is SQLite's). Each Store has a folder of its own.
// The stores of the tests share one database: a schema costs milliseconds,
// a database a third of a second.
var postgresBackend = storetest.Backend{
	Fresh: freshSchema,
	Open: func(ctx context.Context, t *testing.T, where string) (storetest.Store, error) {
		url, schema, _ := strings.Cut(where, "#")
		return store.OpenURL(ctx, url, store.Options{Dir: t.TempDir(), Schema: schema})
	},
}

// icu is the test binary's database with ICU's en-US collation.
var icu struct {
	once    sync.Once
	url     string
	err     error
	schemas atomic.Int64
}

// freshSchema returns "URL#schema": a schema no store uses yet, in the
// database of icu.
func freshSchema(t *testing.T) string {
	t.Helper()
	testutil.NeedTool(t, "postgres")
	icu.once.Do(func() {
		base := testutil.Postgres(t)
		u, err := url.Parse(base)
		if err != nil {
			icu.err = err
			return
		}
		name := strings.TrimPrefix(u.Path, "/") + "_icu"
		db, err := sql.Open("pgx", base)
		if err != nil {
			icu.err = err
			return
		}
		defer db.Close()
		if _, err := db.Exec(`CREATE DATABASE ` + name + ` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`); err != nil {
			icu.err = fmt.Errorf("creating a database with ICU's en-US collation (PostgreSQL 15 or later): %w", err)
			return
		}
		u.Path = "/" + name
		icu.url = u.String()
	})
	if icu.url == "" {
		t.Fatalf("no database for the stores: %v", icu.err)
	}
	return fmt.Sprintf("%s#store-%d", icu.url, icu.schemas.Add(1))
}

// sqlOpen returns a pool on the database at url, closed when t ends.
func sqlOpen(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func openURL(t *testing.T, url string, opt store.Options) *store.Store {
	t.Helper()
	s, err := store.OpenURL(t.Context(), url, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// TestPostgresFolders: a database store keeps its files in Options.Dir,
// its raw logs under Options.Results, and its lock in Dir; Path names the
// database without the password.
func TestPostgresFolders(t *testing.T) {
	t.Parallel()
	db := testutil.Postgres(t)
	u, _ := url.Parse(db)
	u.User = url.UserPassword(u.User.Username(), "s3cret") // trust authentication ignores it
	withPassword := u.String()

	if _, err := store.OpenURL(t.Context(), db, store.Options{}); err == nil || !strings.Contains(err.Error(), "Options.Dir") {
		t.Errorf("OpenURL without a folder: %v; want an error naming Options.Dir", err)
	}
	dir := filepath.Join(t.TempDir(), "local")
	shared := filepath.Join(t.TempDir(), "shared", "results")
	a := openURL(t, withPassword, store.Options{Dir: dir, Results: shared})
	if a.Dir() != dir {
		t.Errorf("Dir() = %q, want %q", a.Dir(), dir)
	}
	if strings.Contains(a.Path(), "s3cret") || !strings.Contains(a.Path(), u.Host) || !strings.Contains(a.Path(), "schema perfbot") {
		t.Errorf("Path() = %q; want the URL without its password, and the schema", a.Path())
	}
	key := store.RunKey{Job: "j1", Commit: "abc", Variant: "x y", Index: 3}
	if got, want := a.RunDir(key), filepath.Join(shared, "j1", "abc", "x%20y", "3"); got != want {
		t.Errorf("RunDir = %q, want %q", got, want)
	}
	for _, d := range []string{dir, shared} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("folder %s was not created: %v", d, err)
		}
	}
	if a.Created() != true || a.Notice() != "" {
		t.Errorf("Created() = %v, Notice() = %q; want true, \"\"", a.Created(), a.Notice())
	}

	// Two processes measuring in one folder would share worktrees: the
	// folder's lock is taken, whatever the database.
	b := openURL(t, db, store.Options{Dir: dir})
	if got, want := b.RunDir(key), filepath.Join(dir, "results", "j1", "abc", "x%20y", "3"); got != want {
		t.Errorf("RunDir without Options.Results = %q, want %q", got, want)
	}
	release, err := a.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(); !errors.Is(err, store.ErrBusy) {
		t.Errorf("second Lock of one folder: %v, want ErrBusy", err)
	}
	release()
	c := openURL(t, db, store.Options{Dir: t.TempDir()})
	releaseC, err := c.Lock()
	if err != nil {
		t.Errorf("Lock of another folder on the same database: %v", err)
	} else {
		releaseC()
	}

	// A folder through OpenURL is Open's store; Results moves its logs.
	folder := t.TempDir()
	f := openURL(t, folder, store.Options{Results: shared})
	if f.Dir() != folder || f.RunDir(key) != filepath.Join(shared, "j1", "abc", "x%20y", "3") {
		t.Errorf("folder store through OpenURL: Dir %q, RunDir %q", f.Dir(), f.RunDir(key))
	}
	// A server that is not there: the error names the database, not
	// the password.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	gone := fmt.Sprintf("postgres://perfbot:s3cret@%s/db?sslmode=disable", l.Addr())
	if _, err := store.OpenURL(t.Context(), gone, store.Options{Dir: dir}); err == nil || strings.Contains(err.Error(), "s3cret") ||
		!strings.Contains(err.Error(), l.Addr().String()+"/db") {
		t.Errorf("OpenURL of a server that is not there: %v; want an error naming the database without its password", err)
	}
	for _, bad := range []struct {
		target string
		opt    store.Options
		want   string
	}{
		{folder, store.Options{Schema: "x"}, "Options.Schema"},
		{"mysql://x@y/z", store.Options{Dir: dir}, "unknown kind of store"},
		{db, store.Options{Dir: dir, Schema: strings.Repeat("s", 64)}, "1 to 63 bytes"},
	} {
		if _, err := store.OpenURL(t.Context(), bad.target, bad.opt); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("OpenURL(%s, %+v) = %v; want an error saying %q", bad.target, bad.opt, err, bad.want)
		}
	}
}

// TestPostgresBesideOthers: perfbot's tables sit in their schema beside
// other programs' tables of the same names in the search path's schema
// (River's among them), and two perfbot schemas in one database are two
// stores.
func TestPostgresBesideOthers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := testutil.Postgres(t)
	admin := sqlOpen(t, db)
	mustExec(t, admin,
		`CREATE TABLE public.runs (x INTEGER)`,
		`CREATE TABLE public.metrics (name TEXT PRIMARY KEY)`,
		`CREATE TABLE public.river_job (id BIGSERIAL PRIMARY KEY, kind TEXT NOT NULL)`,
		`INSERT INTO public.river_job (kind) VALUES ('measure')`)
	a := openURL(t, db, store.Options{Dir: t.TempDir()})
	b := openURL(t, db, store.Options{Dir: t.TempDir(), Schema: "perfbot-b"})
	putRuns(t, a, "c", 3)
	putRuns(t, b, "c", 1)
	for _, c := range []struct {
		s    *store.Store
		want int
	}{{a, 3}, {b, 1}} {
		if runs, err := c.s.RunsWithoutValues(ctx, "j", "c", ""); err != nil || len(runs) != c.want {
			t.Errorf("%s: %d runs, %v; want %d", c.s.Path(), len(runs), err, c.want)
		}
	}
	var n, jobs int
	if err := admin.QueryRow(`SELECT (SELECT count(*) FROM public.runs) + (SELECT count(*) FROM public.metrics), (SELECT count(*) FROM public.river_job)`).Scan(&n, &jobs); err != nil || n != 0 || jobs != 1 {
		t.Errorf("other programs' tables hold %d rows and %d jobs, %v; want untouched (0, 1)", n, jobs, err)
	}
	var schemas []string
	rows, err := admin.Query(`SELECT DISTINCT table_schema FROM information_schema.tables WHERE table_name = 'run_values' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		schemas = append(schemas, s)
	}
	if fmt.Sprint(schemas) != "[perfbot perfbot-b]" {
		t.Errorf("run_values tables in schemas %v, want [perfbot perfbot-b]", schemas)
	}
}

// TestPostgresNotPerfbot: a schema of another program's tables, or with
// another program's version row, is refused and left as it is.
func TestPostgresNotPerfbot(t *testing.T) {
	t.Parallel()
	db := testutil.Postgres(t)
	admin := sqlOpen(t, db)
	mustExec(t, admin,
		`CREATE SCHEMA perfbot`, `CREATE TABLE perfbot.accounts (id INTEGER)`,
		`CREATE SCHEMA other`, `CREATE TABLE other.schema_version (application TEXT, version BIGINT)`,
		`INSERT INTO other.schema_version VALUES ('flyway', 3)`,
		`CREATE SCHEMA empty`)
	for _, c := range []struct{ schema, want string }{
		{"perfbot", "no schema_version table"},
		{"other", `"flyway"`},
	} {
		_, err := store.OpenURL(t.Context(), db, store.Options{Dir: t.TempDir(), Schema: c.schema})
		if !errors.Is(err, store.ErrNotPerfbot) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "schema "+c.schema) {
			t.Errorf("OpenURL of schema %s: %v; want ErrNotPerfbot naming the schema and saying %s", c.schema, err, c.want)
		}
	}
	var n int
	if err := admin.QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_schema IN ('perfbot', 'other')`).Scan(&n); err != nil || n != 2 {
		t.Errorf("refused schemas hold %d tables, %v; want their 2, untouched", n, err)
	}
	// An empty schema, as a DBA creates it for perfbot, is used.
	s := openURL(t, db, store.Options{Dir: t.TempDir(), Schema: "empty"})
	if !s.Created() {
		t.Error("store in an empty schema: Created() = false")
	}
}

// TestPostgresNewerSchema: a schema of a newer perfbot is refused.
func TestPostgresNewerSchema(t *testing.T) {
	t.Parallel()
	db := testutil.Postgres(t)
	openURL(t, db, store.Options{Dir: t.TempDir()})
	mustExec(t, sqlOpen(t, db), fmt.Sprintf(`UPDATE perfbot.schema_version SET version = %d`, store.SchemaVersion+1))
	_, err := store.OpenURL(t.Context(), db, store.Options{Dir: t.TempDir()})
	if !errors.Is(err, store.ErrNewerSchema) || !strings.Contains(err.Error(), fmt.Sprint(store.SchemaVersion+1)) ||
		!strings.Contains(err.Error(), "schema perfbot") {
		t.Errorf("OpenURL of a newer schema: %v; want ErrNewerSchema naming the schema and its version", err)
	}
}

// TestPostgresReadOnly: a database whose transactions are read-only, and a
// role that may only read, are reported as read-only stores, by Open and
// by writes.
func TestPostgresReadOnly(t *testing.T) {
	t.Parallel()
	db := testutil.Postgres(t)
	u, _ := url.Parse(db)
	name := strings.TrimPrefix(u.Path, "/")
	admin := sqlOpen(t, db)
	s := openURL(t, db, store.Options{Dir: t.TempDir()})
	putRuns(t, s, "c", 1)

	// A role that may read perfbot's tables but not write them.
	role := name + "_reader"
	mustExec(t, admin, `CREATE ROLE `+role+` LOGIN`,
		`GRANT USAGE ON SCHEMA perfbot TO `+role, `GRANT SELECT ON ALL TABLES IN SCHEMA perfbot TO `+role)
	t.Cleanup(func() {
		admin.Exec(`DROP OWNED BY ` + role)
		admin.Exec(`DROP ROLE ` + role)
	})
	ru := *u
	ru.User = url.User(role)
	_, err := store.OpenURL(t.Context(), ru.String(), store.Options{Dir: t.TempDir()})
	if !errors.Is(err, store.ErrReadOnly) || !strings.Contains(err.Error(), "runs") || !strings.Contains(err.Error(), name) {
		t.Errorf("OpenURL as a role that may only read: %v; want ErrReadOnly naming the database and the tables", err)
	}

	// A role that may write, until its privileges are revoked: the
	// store open before refuses writes and still reads.
	writer := name + "_writer"
	mustExec(t, admin, `CREATE ROLE `+writer+` LOGIN`, `GRANT USAGE ON SCHEMA perfbot TO `+writer,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA perfbot TO `+writer)
	t.Cleanup(func() {
		admin.Exec(`DROP OWNED BY ` + writer)
		admin.Exec(`DROP ROLE ` + writer)
	})
	wu := *u
	wu.User = url.User(writer)
	w := openURL(t, wu.String(), store.Options{Dir: t.TempDir()})
	putRuns(t, w, "c2", 1)
	mustExec(t, admin, `REVOKE INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA perfbot FROM `+writer)
	if err := w.PutState(t.Context(), "k", "v", []byte("x")); !errors.Is(err, store.ErrReadOnly) || !strings.Contains(err.Error(), "states") {
		t.Errorf("PutState after the role lost its privileges: %v, want ErrReadOnly naming the table", err)
	}
	if runs, err := w.RunsWithoutValues(t.Context(), "j", "c2", ""); err != nil || len(runs) != 1 {
		t.Errorf("reading the store after the role lost its privileges: %d runs, %v; want 1", len(runs), err)
	}

	// Transactions read-only by default: an existing store and a fresh
	// one are refused at Open.
	fresh := testutil.Postgres(t)
	for _, d := range []string{db, fresh} {
		du, _ := url.Parse(d)
		mustExec(t, admin, `ALTER DATABASE `+strings.TrimPrefix(du.Path, "/")+` SET default_transaction_read_only = on`)
		_, err := store.OpenURL(t.Context(), d, store.Options{Dir: t.TempDir()})
		if !errors.Is(err, store.ErrReadOnly) || !strings.Contains(err.Error(), du.Host) || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("OpenURL of %s, read-only by default: %v; want ErrReadOnly naming the database", d, err)
		}
	}
}

// TestMigrateFromVersion3Postgres is TestMigrateFromVersion3 on
// PostgreSQL: the same versions, migrated step by step.
func TestMigrateFromVersion3Postgres(t *testing.T) {
	t.Parallel()
	url := testutil.Postgres(t)
	testMigrateFromVersion3(t, oldDB{
		connect: func() *sql.DB {
			db, err := store.PostgresDB(url, store.DefaultSchema)
			if err != nil {
				t.Fatal(err)
			}
			return db
		},
		version: func(db *sql.DB) (v int) {
			if err := db.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil {
				t.Fatal(err)
			}
			return v
		},
		build: func(db *sql.DB, v int) {
			if err := store.MigratePostgresTo(t.Context(), db, url, store.DefaultSchema, v); err != nil {
				t.Fatal(err)
			}
		},
		open: func() *store.Store { return openURL(t, url, store.Options{Dir: t.TempDir()}) },
	})
}

// TestSchemasAgree checks that the two dialects' schemas have the same
// tables, columns (in order), types, nullability and primary keys.
func TestSchemasAgree(t *testing.T) {
	t.Parallel()
	lite := open(t, t.TempDir())
	ldb, err := sql.Open("sqlite", lite.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer ldb.Close()
	describe := func(db *sql.DB, q string, args ...any) []string {
		t.Helper()
		rows, err := db.Query(q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var table, column, typ string
			var notNull, pk bool
			if err := rows.Scan(&table, &column, &typ, &notNull, &pk); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s.%s %s notnull=%v pk=%v", table, column, typ, notNull, pk))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// SQLite's types in PostgreSQL's words; a primary key column is NOT
	// NULL in PostgreSQL, and in SQLite as the store uses it.
	got := describe(ldb, `
		SELECT m.name, c.name,
			CASE c.type WHEN 'INTEGER' THEN 'bigint' WHEN 'TEXT' THEN 'text' WHEN 'REAL' THEN 'double precision' WHEN 'BLOB' THEN 'bytea' ELSE c.type END,
			c."notnull" OR c.pk > 0, c.pk > 0
		FROM sqlite_schema m JOIN pragma_table_info(m.name) c
		WHERE m.type = 'table' ORDER BY m.name, c.cid`)

	url := testutil.Postgres(t)
	openURL(t, url, store.Options{Dir: t.TempDir()})
	want := describe(sqlOpen(t, url), `
		SELECT c.table_name, c.column_name, c.data_type, c.is_nullable = 'NO',
			EXISTS (SELECT 1 FROM information_schema.table_constraints tc
				JOIN information_schema.key_column_usage k USING (constraint_schema, constraint_name)
				WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = c.table_schema
					AND tc.table_name = c.table_name AND k.column_name = c.column_name)
		FROM information_schema.columns c
		WHERE c.table_schema = $1 AND c.table_name <> 'schema_version'
		ORDER BY c.table_name COLLATE "C", c.ordinal_position`, store.DefaultSchema)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("SQLite's schema:\n%s\n\nPostgreSQL's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(got) < 50 {
		t.Errorf("only %d columns described", len(got))
	}
}
