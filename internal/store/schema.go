package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The schema, version by version. Each migration is a list of SQL
// statements run in one transaction together with every other pending one,
// so a database is always at exactly one version. The version lives in
// PRAGMA user_version, and PRAGMA application_id marks the file as a perfbot
// database. Append new migrations; never edit a released one.
//
// Tables (all STRICT; times are Unix nanoseconds, NULL for "unknown";
// durations are nanoseconds; "variant" is "" for the plain build):
//
//	builds       one build of one commit under one variant, by build_key.
//	jobs         job_key -> the atomic job's name and canonical JSON spec,
//	             to know later what a key meant.
//	runs         one finished run. (job_key, commit_hash, variant, idx) is
//	             unique: a run is a function of that key, so a future job
//	             queue (River on this SQLite or on PostgreSQL) can enqueue
//	             keys and the store deduplicates. Re-putting a key replaces
//	             the row in place (its id is kept). session (v3) is the
//	             measurement session that took the run and machine (v4) the
//	             benchmark machine; both are '' for runs stored before the
//	             version that added them. Runs of two commits are paired
//	             only when (machine, session, idx) match. version (v9) is
//	             the perfbot version that took the run (internal/version:
//	             "v1.2.0", "devel 0123456789ab"), '' for runs stored
//	             before it was recorded.
//	metrics      job_key + name -> unit and better direction; ids grow in
//	             first-seen order. Rows are never changed or deleted.
//	run_values   the values of one run, in order (seq), referencing runs
//	             (ON DELETE CASCADE) and metrics. Clustered by (run_id, seq)
//	             so a run's values are one sequential read.
//	states       opaque data of resumable sessions (bisect, triage) by
//	             (kind, key).
//	tested       (v5) the commits perfbot watch measured, per job and
//	             variant: the reference commit measured in the same rounds,
//	             the session and its rounds (JSON list of run numbers), the
//	             cycle, and the commit's layout summary (JSON).
//	findings     (v5) one per culprit commit: its state (untriaged,
//	             acknowledged, dismissed) and reason, whether later cycles
//	             withdrew it, the finding (JSON), and its mail's Message-ID
//	             and recipients once sent.
//	mail_outbox  (v6) every mail of a finding, per (culprit, revision,
//	             recipient): revision 1 is the first mail, later ones the
//	             updates; its kind (first, update), Message-ID, summary
//	             (JSON: what the revision says), status (pending, sent,
//	             refused, failed, superseded), attempts, last error, next
//	             attempt time, and the Message-ID it went out as (its own
//	             or a digest's).
//	watch_builds (v7) commits perfbot watch could not build, per job and
//	             variant: how many times the build failed (a first failure
//	             is retried once in a later cycle), whether the failure is
//	             final, its error and build log.
//	watch_backfills (v7) a backfill per job, variant and branch: the range
//	             since_commit..until_commit it tests, and whether it is done.
//	watch_anchor_modes (v7) per job and variant, whether the history keeps
//	             an anchor, decided once when the history starts.
//	job_cycles   (v8) perfbot watch's cycles per job.
//	qualifications (v10) perfbot qualify's measurements of a runner for a
//	             job at a commit: the runner (hostname, CPU model, kernel,
//	             nproc), the load average at start and end, alpha, the
//	             runs, the A/A gates and how many failed, whether the
//	             runner is fit, per metric the noise and the detectable
//	             change (JSON list), the planted slowdown's result (JSON,
//	             '' when none), and when.
//
// runs.job_key deliberately does not reference jobs: a run may be stored
// before, or without, its job's spec.
var migrations = [][]string{
	1: {
		`CREATE TABLE builds (
			build_key       TEXT PRIMARY KEY,
			commit_hash     TEXT NOT NULL,
			variant         TEXT NOT NULL,
			status          TEXT NOT NULL,
			artifact_dir    TEXT NOT NULL,
			log_path        TEXT NOT NULL,
			error           TEXT NOT NULL,
			started_unix_ns INTEGER,
			duration_ns     INTEGER NOT NULL
		) STRICT`,
		`CREATE INDEX builds_commit ON builds (commit_hash, variant)`,
		`CREATE TABLE jobs (
			job_key TEXT PRIMARY KEY,
			name    TEXT NOT NULL,
			spec    TEXT NOT NULL
		) STRICT`,
		`CREATE TABLE runs (
			id               INTEGER PRIMARY KEY,
			job_key          TEXT NOT NULL,
			commit_hash      TEXT NOT NULL,
			variant          TEXT NOT NULL,
			idx              INTEGER NOT NULL CHECK (idx >= 1),
			status           TEXT NOT NULL,
			reason           TEXT NOT NULL,
			cpu              INTEGER NOT NULL,
			started_unix_ns  INTEGER,
			wall_ns          INTEGER NOT NULL,
			user_ns          INTEGER NOT NULL,
			sys_ns           INTEGER NOT NULL,
			max_rss_kib      INTEGER NOT NULL,
			exit_code        INTEGER NOT NULL,
			stdout_path      TEXT NOT NULL,
			stderr_path      TEXT NOT NULL,
			recorded_unix_ns INTEGER NOT NULL,
			UNIQUE (job_key, commit_hash, variant, idx)
		) STRICT`,
		`CREATE TABLE metrics (
			id      INTEGER PRIMARY KEY,
			job_key TEXT NOT NULL,
			name    TEXT NOT NULL,
			unit    TEXT NOT NULL,
			better  INTEGER NOT NULL,
			UNIQUE (job_key, name)
		) STRICT`,
		`CREATE TABLE run_values (
			run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			seq       INTEGER NOT NULL,
			metric_id INTEGER NOT NULL REFERENCES metrics (id),
			value     REAL NOT NULL,
			PRIMARY KEY (run_id, seq)
		) STRICT, WITHOUT ROWID`,
	},
	2: {
		`CREATE TABLE states (
			kind            TEXT NOT NULL,
			key             TEXT NOT NULL,
			data            BLOB NOT NULL,
			updated_unix_ns INTEGER NOT NULL,
			PRIMARY KEY (kind, key)
		) STRICT`,
	},
	// 3: the measurement session that took each run. Runs of two commits
	// with the same index are interleaved pairs only when one session took
	// both; runs stored before version 3 have the session "".
	3: {
		`ALTER TABLE runs ADD COLUMN session TEXT NOT NULL DEFAULT ''`,
	},
	// 4: the benchmark machine that took each run, for a fleet of
	// machines where the runs of one comparison come from several: runs
	// are paired only within one round on one machine. Runs stored before
	// version 4 have the machine "".
	4: {
		`ALTER TABLE runs ADD COLUMN machine TEXT NOT NULL DEFAULT ''`,
	},
	// 5: perfbot watch's history and findings.
	5: {
		`CREATE TABLE tested (
			job_key        TEXT NOT NULL,
			variant        TEXT NOT NULL,
			commit_hash    TEXT NOT NULL,
			branch         TEXT NOT NULL,
			ref_commit     TEXT NOT NULL,
			session        TEXT NOT NULL,
			rounds         TEXT NOT NULL,
			cycle          INTEGER NOT NULL,
			tested_unix_ns INTEGER NOT NULL,
			layout         TEXT NOT NULL,
			PRIMARY KEY (job_key, variant, commit_hash)
		) STRICT`,
		`CREATE TABLE findings (
			culprit         TEXT PRIMARY KEY,
			state           TEXT NOT NULL,
			reason          TEXT NOT NULL,
			withdrawn       INTEGER NOT NULL,
			data            TEXT NOT NULL,
			message_id      TEXT NOT NULL,
			sent_to         TEXT NOT NULL,
			created_unix_ns INTEGER NOT NULL,
			updated_unix_ns INTEGER NOT NULL
		) STRICT`,
	},
	// 6: the outbox of findings' mails, one row per message and recipient.
	6: {
		`CREATE TABLE mail_outbox (
			culprit              TEXT NOT NULL,
			revision             INTEGER NOT NULL,
			recipient            TEXT NOT NULL,
			kind                 TEXT NOT NULL,
			message_id           TEXT NOT NULL,
			summary              TEXT NOT NULL,
			status               TEXT NOT NULL,
			attempts             INTEGER NOT NULL,
			error                TEXT NOT NULL,
			next_attempt_unix_ns INTEGER NOT NULL,
			sent_as              TEXT NOT NULL,
			updated_unix_ns      INTEGER NOT NULL,
			PRIMARY KEY (culprit, revision, recipient)
		) STRICT`,
	},
	// 7: perfbot watch's broken builds, backfills and anchor decisions.
	7: {
		`CREATE TABLE watch_builds (
			job_key       TEXT NOT NULL,
			variant       TEXT NOT NULL,
			commit_hash   TEXT NOT NULL,
			branch        TEXT NOT NULL,
			failures      INTEGER NOT NULL,
			final         INTEGER NOT NULL,
			error         TEXT NOT NULL,
			log_path      TEXT NOT NULL,
			first_unix_ns INTEGER NOT NULL,
			last_unix_ns  INTEGER NOT NULL,
			PRIMARY KEY (job_key, variant, commit_hash)
		) STRICT`,
		`CREATE TABLE watch_backfills (
			job_key         TEXT NOT NULL,
			variant         TEXT NOT NULL,
			branch          TEXT NOT NULL,
			since_commit    TEXT NOT NULL,
			until_commit    TEXT NOT NULL,
			done            INTEGER NOT NULL,
			started_unix_ns INTEGER NOT NULL,
			PRIMARY KEY (job_key, variant, branch)
		) STRICT`,
		`CREATE TABLE watch_anchor_modes (
			job_key         TEXT NOT NULL,
			variant         TEXT NOT NULL,
			anchor          INTEGER NOT NULL,
			reason          TEXT NOT NULL,
			decided_unix_ns INTEGER NOT NULL,
			PRIMARY KEY (job_key, variant)
		) STRICT`,
	},
	// 8: perfbot watch's cycles, per job: what each did and the error or
	// panic that ended it (the failure notice counts streaks of them).
	8: {
		`CREATE TABLE job_cycles (
			job              TEXT NOT NULL,
			name             TEXT NOT NULL,
			cycle            INTEGER NOT NULL,
			started_unix_ns  INTEGER NOT NULL,
			finished_unix_ns INTEGER NOT NULL,
			tested           INTEGER NOT NULL,
			error            TEXT NOT NULL,
			panicked         INTEGER NOT NULL,
			noticed          INTEGER NOT NULL,
			PRIMARY KEY (job, cycle)
		) STRICT`,
	},
	// 9: the perfbot version that took each run.
	9: {
		`ALTER TABLE runs ADD COLUMN version TEXT NOT NULL DEFAULT ''`,
	},
	// 10: perfbot qualify's qualifications of a runner for a job.
	10: {
		`CREATE TABLE qualifications (
			job_key          TEXT NOT NULL,
			commit_hash      TEXT NOT NULL,
			hostname         TEXT NOT NULL,
			cpu_model        TEXT NOT NULL,
			kernel           TEXT NOT NULL,
			nproc            INTEGER NOT NULL,
			load_start       REAL NOT NULL,
			load_end         REAL NOT NULL,
			alpha            REAL NOT NULL,
			runs             INTEGER NOT NULL,
			gates            INTEGER NOT NULL,
			false_positives  INTEGER NOT NULL,
			fit              INTEGER NOT NULL,
			metrics          TEXT NOT NULL,
			slowdown         TEXT NOT NULL,
			started_unix_ns  INTEGER NOT NULL,
			finished_unix_ns INTEGER NOT NULL,
			PRIMARY KEY (job_key, hostname, started_unix_ns)
		) STRICT`,
	},
}

// SchemaVersion is the schema version this perfbot reads and writes: the
// number of migrations.
const SchemaVersion = 10

// applicationID marks a SQLite file as a perfbot database ("pfbt").
const applicationID = 0x70666274

// ErrNewerSchema is wrapped by Open when the database was written by a newer
// perfbot, with a schema this one does not know.
var ErrNewerSchema = errors.New("database schema is newer than this perfbot")

// ErrNotPerfbot is wrapped by Open when the file is a SQLite database of
// some other program, and by OpenURL when the PostgreSQL schema holds
// another program's tables.
var ErrNotPerfbot = errors.New("not a perfbot database")

// migrate brings the database at path, open as db, to SchemaVersion.
// created reports whether it was a new database (schema version 0, no
// tables) that this call initialised.
func migrate(ctx context.Context, db *sql.DB, path string) (created bool, err error) {
	return migrateTo(ctx, db, path, SchemaVersion)
}

// migrateTo brings the database to version target (tests use it to build
// databases of older versions). All pending migrations run in one
// immediate transaction, so concurrent Opens of one folder migrate once.
// An existing database is checked (PRAGMA quick_check) before it is
// migrated: a corrupt one is refused, not changed.
func migrateTo(ctx context.Context, db *sql.DB, path string, target int) (created bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: open %s: %w", path, err)
	}
	defer tx.Rollback()
	var version, appID int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return false, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := tx.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return false, fmt.Errorf("store: open %s: %w", path, err)
	}
	switch {
	case appID != 0 && appID != applicationID:
		return false, fmt.Errorf("store: open %s: %w (SQLite application_id %#x)", path, ErrNotPerfbot, appID)
	case version > SchemaVersion:
		return false, fmt.Errorf("store: open %s: %w: it has schema version %d, this perfbot knows up to %d; use a newer perfbot or another .perfbot folder",
			path, ErrNewerSchema, version, SchemaVersion)
	case version > 0 && appID == 0:
		return false, fmt.Errorf("store: open %s: %w (schema version %d without perfbot's application_id)", path, ErrNotPerfbot, version)
	case version == 0:
		var tables int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
			return false, fmt.Errorf("store: open %s: %w", path, err)
		}
		if tables > 0 {
			return false, fmt.Errorf("store: open %s: %w (it has %d schema objects and no perfbot version)", path, ErrNotPerfbot, tables)
		}
	}
	if version >= target {
		return false, nil
	}
	if version > 0 {
		if err := quickCheck(ctx, tx, path, fmt.Sprintf("quick_check before migrating it from schema version %d to %d", version, target)); err != nil {
			return false, err
		}
	}
	for v := version + 1; v <= target; v++ {
		for i, stmt := range migrations[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return false, fmt.Errorf("store: open %s: migrating to schema version %d, step %d: %w", path, v, i+1, err)
			}
		}
	}
	// PRAGMA arguments cannot be bound parameters.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, applicationID)); err != nil {
		return false, fmt.Errorf("store: open %s: %w", path, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, target)); err != nil {
		return false, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: open %s: migrating to schema version %d: %w", path, target, err)
	}
	return version == 0, nil
}
