// Package store keeps everything perfbot measures: builds, runs and their
// samples. It has one type, [Store], over two databases: an embedded SQLite
// database (modernc.org/sqlite, WAL mode) in a .perfbot folder, for one
// machine ([Open]), and a PostgreSQL database shared by a fleet of machines
// and by its job queue ([OpenURL] with a postgres:// URL). Both pass one
// conformance suite (package storetest) and behave alike in everything
// the suite pins down. Every run is committed as soon as it finishes, so a
// killed perfbot loses at most the run in flight and a re-run resumes from
// what is stored.
//
// A run is identified by [RunKey]: (job key, commit, variant, run number).
// That makes a run a pure function of its key, so a job queue can hand out
// keys and the store deduplicates: storing a key twice, from any number of
// processes at once, leaves one run.
//
// The layout of a .perfbot folder:
//
//	.perfbot/perfbot.db      the SQLite database (plus perfbot.db-wal and -shm)
//	.perfbot/results/<job>/<commit>/<variant or "default">/<index>/
//	                         one run's raw logs (see [Store.RunDir])
//
// A store in PostgreSQL keeps its tables in a schema of their own ("perfbot"
// unless [Options].Schema says otherwise), so that they sit beside other
// programs' tables in one database: River's river_* tables in the schema of
// the search path, typically public. The database holds what the SQLite
// file holds; the files it does not hold live in a folder named by
// [Options]: Dir, this process's folder (build worktrees, warm-up logs,
// knob presets, the measuring lock of [Store.Lock]), and Results, the root
// of the raw logs' tree ([Store.RunDir]; Dir/results unless set). In a
// fleet, Dir is local to each machine and Results is a folder every machine
// and the server can reach (a shared file system); the database records
// each run's log paths as they were written. See docs/store.md.
//
// The database schema is described, table by table, in schema.go (SQLite)
// and schema_postgres.go (PostgreSQL): one versioned schema, migrated in
// one transaction. Opening a database written by an older perfbot migrates
// it; opening one written by a newer perfbot fails with [ErrNewerSchema].
//
// A store it cannot use is reported with an error that names the file,
// folder or database and says what to do: read-only ([ErrReadOnly]),
// corrupt ([ErrCorrupt], from Open or any later read or write), or another
// program's database or schema ([ErrNotPerfbot]). The store never deletes,
// replaces or repairs a database, and prints nothing: what the user should
// know about an Open that succeeded is in [Store.Notice].
//
// A Store is safe for concurrent use by several goroutines, and several
// processes may open the same store. In SQLite, writes are serialized by
// SQLite's lock (waiting up to [BusyTimeout]); in PostgreSQL they run
// concurrently, a run's write locking its own row (and, while it creates
// metrics a job has not stored yet, the job's metrics). Readers never
// block and always see whole runs.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/perfbot/perfbot/internal/metric"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// ErrNotFound is returned when a looked-up record does not exist.
var ErrNotFound = errors.New("not found")

// BuildStatus is the outcome of a build.
type BuildStatus string

// Build statuses.
const (
	BuildOK     BuildStatus = "ok"
	BuildFailed BuildStatus = "failed"
)

// BuildRecord is one build of one commit under one variant.
type BuildRecord struct {
	// Key identifies the build: a hash of the commit, the build command,
	// the artifacts and the variant's environment (computed by package build).
	Key         string
	Commit      string      // full hash
	Variant     string      // "" for the plain build
	Status      BuildStatus // BuildOK or BuildFailed
	ArtifactDir string      // where the artifacts were copied
	LogPath     string      // the build's combined output
	Error       string      // for failed builds: why
	Started     time.Time
	Duration    time.Duration
}

// RunKey identifies one run.
type RunKey struct {
	Job     string // job key: a hash of the atomic job's measured parts (see job.Key)
	Commit  string // full hash
	Variant string // "" for the plain build
	Index   int    // run number, 1-based; warm-ups are not stored
}

// String formats the key for error messages: job/commit/variant#index, with
// "default" for the plain variant.
func (k RunKey) String() string {
	return fmt.Sprintf("%s/%s/%s#%d", k.Job, k.Commit, variantName(k.Variant), k.Index)
}

// RunStatus is the outcome of a run.
type RunStatus string

// Run statuses. Everything but RunOK is a failed run; failed runs are kept
// and reported, never averaged in.
const (
	RunOK       RunStatus = "ok"
	RunCrashed  RunStatus = "crashed"   // non-zero exit or killed by a signal
	RunTimeout  RunStatus = "timeout"   // killed at the job's timeout
	RunNoMetric RunStatus = "no-metric" // exited 0 but a metric was missing or unreadable
	RunError    RunStatus = "error"     // perfbot could not start it
)

// RunRecord is one finished run and its samples.
type RunRecord struct {
	RunKey
	Status     RunStatus
	Reason     string // for failed runs: why, in one line
	CPU        int    // the CPU it was pinned to, -1 when not pinned
	Started    time.Time
	Usage      metric.Usage
	ExitCode   int
	StdoutPath string
	StderrPath string
	// Session identifies the measurement that took the run: runs of two
	// commits with the same Index are interleaved pairs only when they
	// share a Session ("" for runs stored before sessions were recorded).
	Session string
	// Machine identifies the benchmark machine that took the run (""
	// for runs stored before machines were recorded). Runs of two
	// commits are paired only when they share Machine, Session and Index.
	Machine string
	// Version is the perfbot version that took the run (see package
	// version: "v1.2.0", "devel 0123456789ab"; "" for runs stored before
	// versions were recorded). A table whose runs come from different
	// versions says so.
	Version string
	// Values holds every metric value read from the run, the builtin
	// resource metrics included. A metric may have several values per run
	// (a Go benchmark run with -count); their order is kept.
	Values []metric.Value
}

// Sample is one stored value of one metric.
type Sample struct {
	Run   int // RunKey.Index
	Value float64
	// Session and Machine are the RunRecord.Session and RunRecord.Machine
	// of the run the value is from, so that a caller can pair samples of
	// two commits by (Machine, Session, Run) without reading the runs.
	// Both are "" for runs stored before they were recorded, and in
	// samples that did not come from the store.
	Session string
	Machine string
}

// MetricInfo describes one metric of a job: its name, unit and which
// direction is better, as first stored.
type MetricInfo struct {
	Name   string
	Unit   string
	Better metric.Better
}

// DBName is the database file's name inside a .perfbot folder.
const DBName = "perfbot.db"

// ResultsDir is the name of the folder, inside a .perfbot folder, that holds
// the runs' raw logs.
const ResultsDir = "results"

// BusyTimeout is how long a write waits for another process's write to
// finish before failing: with "database is locked" in SQLite, with a lock
// timeout (lock_timeout) in PostgreSQL.
const BusyTimeout = 30 * time.Second

// Store is an open results store: a .perfbot folder, or a PostgreSQL
// database and a folder for its files.
type Store struct {
	dialect dialect
	dir     string  // the folder for files: see Dir
	results string  // the root of RunDir's tree
	path    string  // the database: dir/perfbot.db, or a URL without its password
	db      *sql.DB // readers; read transactions are snapshots
	// wdb is the writers' pool. In SQLite it is one connection whose
	// transactions BEGIN IMMEDIATE; in PostgreSQL it is db.
	wdb *sql.DB

	created bool   // Open initialised a new database
	notice  string // see Notice

	// mu guards metrics, a cache of committed metric rows per job key.
	// Metric rows are never deleted or changed, so a cached row stays
	// valid whoever else writes the database.
	mu      sync.Mutex
	metrics map[string]map[string]metricRow
}

// metricRow is one row of the metrics table.
type metricRow struct {
	id     int64
	unit   string
	better metric.Better
}

// Open opens the .perfbot folder dir, creating it, its results folder and
// its database when missing, and migrates an older database to the current
// schema. It fails with a clear error naming the database file when the
// file is not a perfbot database ([ErrNotPerfbot]), was written by a newer
// perfbot ([ErrNewerSchema]) or is corrupt ([ErrCorrupt]; the file is left
// as it is), and naming the folder or file that cannot be written when the
// store is read-only ([ErrReadOnly]).
//
// An empty (0-byte) database file is taken as a new store: see
// [Store.Created] and [Store.Notice].
func Open(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	path := filepath.Join(abs, DBName)
	if err := checkWritable(abs, path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(abs, ResultsDir), 0o777); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("store: open %s: not a regular file", path)
	}
	wasEmpty := err == nil && fi.Size() == 0

	s := &Store{dialect: sqliteDB, dir: abs, results: filepath.Join(abs, ResultsDir), path: path,
		metrics: make(map[string]map[string]metricRow)}
	s.wdb, err = sql.Open("sqlite", dsn(path, "&_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// One writer connection: writes from this process queue in database/sql
	// rather than spinning in SQLite's busy handler.
	s.wdb.SetMaxOpenConns(1)
	if s.created, err = migrate(context.Background(), s.wdb, path); err != nil {
		s.wdb.Close()
		if bad := badSQLite(path, "open", err); bad != nil {
			return nil, bad
		}
		return nil, err
	}
	// Another process may have created the file and be initialising it:
	// only the Open that initialised the database reports it was empty.
	if s.created && wasEmpty {
		s.notice = fmt.Sprintf("store %s was empty (0 bytes): initialised a new store in it", path)
	}
	s.db, err = sql.Open("sqlite", dsn(path, ""))
	if err != nil {
		s.wdb.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := s.db.Ping(); err != nil {
		s.Close()
		if bad := badSQLite(path, "open", err); bad != nil {
			return nil, bad
		}
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return s, nil
}

// Created reports whether Open initialised a new, empty database: the
// database file did not exist or was empty (0 bytes), or the PostgreSQL
// schema did not exist or was empty. It is false when the database
// existed, even at an older schema version, and when another process
// opening the same store at the same time initialised it.
func (s *Store) Created() bool { return s.created }

// Notice returns one line about the store that the caller should show its
// user, or "" when there is nothing to say. The store itself prints
// nothing. Today the only notice is that the database file was empty
// (0 bytes), as a full disk or an interrupted copy leaves it, and Open
// initialised a new store in it: whatever was measured before is not in
// it. A PostgreSQL store has no notice.
func (s *Store) Notice() string { return s.notice }

// dsn is the modernc.org/sqlite data source name for the database at path:
// WAL journal, full fsync at every commit (a returned PutRun survives a
// power cut, not only a crash), foreign keys enforced, and a busy timeout.
func dsn(path, extra string) string {
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
	return u + fmt.Sprintf("?_pragma=busy_timeout(%d)", BusyTimeout.Milliseconds()) +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(FULL)" +
		"&_pragma=foreign_keys(1)" + extra
}

// Close closes the database. Everything put before has been committed.
func (s *Store) Close() error {
	var errs []error
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	if s.wdb != nil && s.wdb != s.db {
		errs = append(errs, s.wdb.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: close %s: %w", s.path, err)
	}
	return nil
}

// Dir returns the absolute path of the store's folder: the .perfbot
// folder, or for a PostgreSQL store the folder [Options].Dir named.
// Packages keep their files under it (build worktrees, warm-up logs, knob
// presets).
func (s *Store) Dir() string { return s.dir }

// Path names the database, for messages: the absolute path of the SQLite
// file, or the PostgreSQL URL without its password and with the schema.
func (s *Store) Path() string { return s.path }

// write runs fn in one write transaction (BEGIN IMMEDIATE in SQLite, READ
// COMMITTED in PostgreSQL) and commits it. When it returns nil the
// transaction is durable.
func (s *Store) write(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(what, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return s.fail(what, err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail(what+": commit", err)
	}
	return nil
}

// fail returns the error of a read or write that failed with err while
// doing what: [ErrCorrupt] or [ErrReadOnly] with what to do, when it is
// one of those, else err with what.
func (s *Store) fail(what string, err error) error {
	bad := badSQLite
	if s.dialect == postgresDB {
		bad = badPostgres
	}
	if bad := bad(s.path, what, err); bad != nil {
		return bad
	}
	return fmt.Errorf("store: %s: %w", what, err)
}

// read runs fn in one read transaction, a consistent snapshot of the
// database that does not block writers.
func (s *Store) read(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, s.dialect.readTx())
	if err != nil {
		return s.fail(what, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return s.fail(what, err)
	}
	return nil
}

// Times are stored as Unix nanoseconds; the zero time as NULL.

var (
	minTime = time.Unix(0, -1<<63)
	maxTime = time.Unix(0, 1<<63-1)
)

func timeArg(field string, t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	if t.Before(minTime) || t.After(maxTime) {
		return nil, fmt.Errorf("%s %v is outside the years 1678 to 2262", field, t)
	}
	return t.UnixNano(), nil
}

func timeOf(ns sql.NullInt64) time.Time {
	if !ns.Valid {
		return time.Time{}
	}
	return time.Unix(0, ns.Int64)
}

// checkText returns an error naming what is wrong when one of the strings
// cannot be stored: fieldValues alternates a field's name and its value.
// Both databases refuse the same strings: PostgreSQL's text holds only
// valid UTF-8 without NUL bytes, and a store must not keep in one database
// what the other would lose.
func checkText(fieldValues ...string) error {
	for i := 0; i+1 < len(fieldValues); i += 2 {
		field, s := fieldValues[i], fieldValues[i+1]
		switch {
		case !utf8.ValidString(s):
			return fmt.Errorf("%s %q is not valid UTF-8", field, s)
		case strings.IndexByte(s, 0) >= 0:
			return fmt.Errorf("%s %q contains a NUL byte", field, s)
		}
	}
	return nil
}
