package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"golang.org/x/sys/unix"
)

// Options are what OpenURL needs besides the database.
type Options struct {
	// Dir is the folder for the files the database does not hold: this
	// process's build worktrees, warm-up logs, knob presets and the
	// measuring lock (see [Store.Dir] and [Store.Lock]). A PostgreSQL
	// store needs one; it is created when missing. In a fleet, give each
	// machine its own, on a local disk.
	Dir string
	// Results is the root of the runs' raw logs ([Store.RunDir]); ""
	// is Dir/results. In a fleet, a folder that every machine and the
	// server reach under the same path (a shared file system), so that
	// the log paths stored with each run can be read anywhere.
	Results string
	// Schema is the PostgreSQL schema that holds perfbot's tables; "" is
	// DefaultSchema. Several stores can share one database in several
	// schemas. Other programs' tables (River's river_* tables in the
	// search path's schema) are neither read nor touched.
	Schema string
}

// DefaultSchema is the PostgreSQL schema of perfbot's tables when
// Options.Schema is "".
const DefaultSchema = "perfbot"

// pgMaxConns is how many connections one Store holds open at most: a
// process writes one run at a time, and readers take one each.
const pgMaxConns = 8

// Advisory lock classes: perfbot's PostgreSQL advisory locks use the
// two-int4 key form, whose key space does not overlap the one-bigint form
// River uses; the class is the first key.
const (
	migrateLockClass = 0x7066626d // "pfbm": opening (migrating) a schema; second key hashtext(schema)
	metricsLockClass = 0x70666274 // "pfbt": creating a job's metrics; second key hashtext(job key)
)

// OpenURL opens the store at target: a PostgreSQL database named by a
// postgres:// or postgresql:// URL (libpq's URL form, as pgx reads it), or
// a .perfbot folder, which it opens as [Open] does (opt.Dir and opt.Schema
// must then be ""; opt.Results moves the raw logs' tree).
//
// In PostgreSQL it creates the schema (opt.Schema) and its tables when
// missing and migrates older ones, in one transaction under an advisory
// lock, so that processes opening a fresh database at once create it once
// ([Store.Created] is true for one of them). It fails with an error naming
// the database when the schema holds other tables but no perfbot version
// ([ErrNotPerfbot]), was written by a newer perfbot ([ErrNewerSchema]), or
// cannot be written by this connection: a standby, a read-only default, a
// role without the privileges ([ErrReadOnly]). The connections of the
// store set their search_path to the schema, lock_timeout to
// [BusyTimeout] and synchronous_commit on, so that a PutRun that returned
// survives a crash of the server.
func OpenURL(ctx context.Context, target string, opt Options) (*Store, error) {
	if !strings.HasPrefix(target, "postgres://") && !strings.HasPrefix(target, "postgresql://") {
		if strings.Contains(target, "://") {
			return nil, fmt.Errorf("store: open %s: unknown kind of store (want a postgres:// URL or a folder)", RedactURL(target))
		}
		if opt.Dir != "" || opt.Schema != "" {
			return nil, fmt.Errorf("store: open %s: a folder store takes no Options.Dir or Options.Schema", target)
		}
		s, err := Open(target)
		if err != nil || opt.Results == "" {
			return s, err
		}
		if err := s.setResults(opt.Results); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	return openPostgres(ctx, target, opt)
}

func openPostgres(ctx context.Context, target string, opt Options) (*Store, error) {
	schema := opt.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	desc := fmt.Sprintf("%s (schema %s)", RedactURL(target), schema)
	if err := checkText("schema", schema); err != nil || len(schema) > 63 {
		return nil, fmt.Errorf("store: open %s: schema name %q is not 1 to 63 bytes of UTF-8", desc, schema)
	}
	if opt.Dir == "" {
		return nil, fmt.Errorf("store: open %s: no folder (Options.Dir) for the files a database store keeps beside it: run logs, build worktrees", desc)
	}
	dir, err := filepath.Abs(opt.Dir)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", desc, err)
	}
	s := &Store{dialect: postgresDB, dir: dir, results: filepath.Join(dir, ResultsDir), path: desc,
		metrics: make(map[string]map[string]metricRow)}
	if err := s.setResults(opt.Results); err != nil {
		return nil, err
	}
	if s.db, err = pgOpenDB(target, schema); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", desc, err)
	}
	s.wdb = s.db
	if s.created, err = migratePostgres(ctx, s.db, desc, schema, SchemaVersion); err != nil {
		s.db.Close()
		if bad := badPostgres(desc, "open", err); bad != nil {
			return nil, bad
		}
		return nil, err
	}
	return s, nil
}

// pgOpenDB returns the pool of connections to the database at target,
// whose sessions have perfbot's settings: search_path the schema, lock
// waits up to BusyTimeout, commits durable. A connection attempt gives up
// after BusyTimeout unless the URL's connect_timeout says otherwise.
func pgOpenDB(target, schema string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(target)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout == 0 { // the URL has no connect_timeout
		cfg.ConnectTimeout = BusyTimeout
	}
	cfg.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	cfg.RuntimeParams["lock_timeout"] = strconv.FormatInt(BusyTimeout.Milliseconds(), 10)
	cfg.RuntimeParams["synchronous_commit"] = "on"
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "perfbot"
	}
	db := sql.OpenDB(rebinding{stdlib.GetConnector(*cfg)})
	db.SetMaxOpenConns(pgMaxConns)
	db.SetMaxIdleConns(pgMaxConns)
	db.SetConnMaxIdleTime(time.Minute)
	return db, nil
}

// setResults makes results (or Dir/results for "") the root of RunDir's
// tree, creating it, and checks that the folders can be written.
func (s *Store) setResults(results string) error {
	if results != "" {
		abs, err := filepath.Abs(results)
		if err != nil {
			return fmt.Errorf("store: results folder %s: %w", results, err)
		}
		s.results = abs
	}
	for _, d := range []string{s.dir, s.results} {
		err := unix.Access(d, unix.W_OK|unix.X_OK)
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) {
			return readOnlyError(d, err)
		}
	}
	for _, d := range []string{s.dir, s.results} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			return fmt.Errorf("store: open %s: %w", s.path, err)
		}
	}
	return nil
}

// RedactURL returns a database URL (or a store folder) for messages,
// without its password: a postgres:// URL with the password masked, or,
// for a string that is not one and mentions a password (a key=value
// connection string, a URL that does not parse), a phrase instead of it.
func RedactURL(target string) string {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		if err != nil || strings.Contains(strings.ToLower(target), "password") {
			return "the database connection string (not shown: it may hold a password)"
		}
		return target
	}
	q := u.Query()
	masked := false
	for k := range q {
		if IsPasswordKey(k) {
			q.Set(k, "xxxxx")
			masked = true
		}
	}
	if masked {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// IsPasswordKey reports whether a database URL's parameter k holds a
// password (password, sslpassword, ...): the one rule of what RedactURL
// masks and WithoutPassword drops.
func IsPasswordKey(k string) bool { return strings.Contains(strings.ToLower(k), "password") }

// WithoutPassword is a postgres:// URL without its password and without
// any password-like parameter (IsPasswordKey), for a command shown to a
// person (libpq's PGPASSWORD or ~/.pgpass give them), and whether it had
// one; "" for what is not a postgres:// URL.
func WithoutPassword(target string) (string, bool) {
	u, err := url.Parse(target)
	if target == "" || err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", false
	}
	had := false
	if u.User != nil {
		_, had = u.User.Password()
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	dropped := false
	for k := range q {
		if IsPasswordKey(k) {
			q.Del(k)
			dropped = true
		}
	}
	if dropped {
		had = true
		u.RawQuery = q.Encode()
	}
	return u.String(), had
}
