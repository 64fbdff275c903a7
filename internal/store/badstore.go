package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// How the store reports a store it cannot use as it is: read-only, or
// corrupt. Both errors name the file or folder and say what to do.

// ErrReadOnly is wrapped by Open when the store folder, its results folder
// or a database file cannot be written by this process, or the PostgreSQL
// connection may not write perfbot's tables (a standby, read-only
// transactions, missing privileges), and by writes when the database
// became read-only after Open.
var ErrReadOnly = errors.New("read-only")

// ErrCorrupt is wrapped when SQLite finds the database file damaged
// (malformed, or not a database at all), or PostgreSQL reports damaged
// data or indexes (SQLSTATE XX001, XX002), by Open or by any later read or
// write. The store never deletes, replaces or repairs the database.
var ErrCorrupt = errors.New("database is corrupt")

// checkWritable returns an error wrapping ErrReadOnly when the store folder
// dir, its results folder or a database file that exists cannot be written
// by this process. (SQLite would open a read-only database file read-only
// and fail only at the first write, and fail in a read-only folder with
// "unable to open database file" or "attempt to write a readonly
// database".)
func checkWritable(dir, path string) error {
	for _, c := range []struct {
		path string
		mode uint32
	}{
		{dir, unix.W_OK | unix.X_OK},
		{filepath.Join(dir, ResultsDir), unix.W_OK | unix.X_OK},
		{path, unix.R_OK | unix.W_OK},
		{path + "-wal", unix.R_OK | unix.W_OK},
		{path + "-shm", unix.R_OK | unix.W_OK},
	} {
		err := unix.Access(c.path, c.mode)
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) {
			return readOnlyError(c.path, err)
		}
		// Missing is fine (Open creates it); other errors surface when
		// Open uses the path.
	}
	return nil
}

func readOnlyError(path string, err error) error {
	return fmt.Errorf("store %s is %w (%v): perfbot records every build and run there; make it writable for this user (chmod u+w, or chown) or use another store folder",
		path, ErrReadOnly, err)
}

// corruptError is the error for the corrupt database at path, found while
// doing what; cause is what SQLite said.
func corruptError(path, what string, cause error) error {
	dir := filepath.Dir(path)
	return fmt.Errorf("store %s: %w: %w (%s); move %s and its -wal and -shm files out of %s to start a new store (the runs' raw logs under %s are kept; sqlite3's .recover may save part of the database)",
		path, ErrCorrupt, cause, what, filepath.Base(path), dir, filepath.Join(dir, ResultsDir))
}

// sqliteCode returns the primary SQLite result code of err, 0 if err is
// no SQLite error.
func sqliteCode(err error) (code int, e *sqlite.Error) {
	if errors.As(err, &e) {
		return e.Code() & 0xff, e
	}
	return 0, nil
}

// badSQLite returns the error to report for err, which happened while
// doing what with the database at path, when it says the database is
// corrupt or read-only; otherwise nil.
func badSQLite(path, what string, err error) error {
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrReadOnly) {
		return err
	}
	switch code, e := sqliteCode(err); code {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return corruptError(path, what, e)
	case sqlite3.SQLITE_READONLY:
		return readOnlyError(path, e)
	}
	return nil
}

// quickCheck runs SQLite's quick_check on the database open in tx and
// returns an error wrapping ErrCorrupt when it finds damage.
func quickCheck(ctx context.Context, tx *sql.Tx, path, what string) error {
	rows, err := tx.QueryContext(ctx, `PRAGMA quick_check(5)`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		for _, l := range strings.Split(line, "\n") {
			if l != "ok" && l != "" && !strings.HasPrefix(l, "*** ") {
				problems = append(problems, l)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return corruptError(path, what, errors.New(strings.Join(problems, "; ")))
	}
	return nil
}
