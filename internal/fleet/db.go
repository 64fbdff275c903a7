package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// Connect opens a pool on the fleet's PostgreSQL database (a postgres://
// URL), checking that it answers.
func Connect(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("--db %q: %w", Redact(url), err)
	}
	// pgxpool's default (4 connections on a small server) is too few: the
	// watch scheduler and every running watch cycle hold a connection for
	// their advisory locks, River's listener one more. pool_max_conns in
	// the URL still decides.
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, MinPoolConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("--db %s: %w", Redact(url), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("--db %s: %w", Redact(url), err)
	}
	return pool, nil
}

// MinPoolConns is the fewest connections a fleet process's pool holds
// unless the URL's pool_max_conns says otherwise.
const MinPoolConns = 32

// Redact hides a password in a database URL for messages
// (store.RedactURL).
func Redact(url string) string { return store.RedactURL(url) }

// schema holds the fleet's own tables, beside River's and the results
// store's: the machines, content-addressed blobs (artifacts and logs) and
// the builds made in the fleet.
const schema = `
CREATE TABLE IF NOT EXISTS perfbot_fleet_machines (
	id text PRIMARY KEY,
	class text NOT NULL,
	cpu_model text NOT NULL,
	cpus int NOT NULL,
	kernel text NOT NULL,
	compiler text NOT NULL,
	cpu int NOT NULL,           -- the CPU runs are pinned to, -1 none
	calibration text NOT NULL,  -- what the calibration found
	pid int NOT NULL,
	started timestamptz NOT NULL,
	heartbeat timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS perfbot_fleet_blobs (
	sha256 text PRIMARY KEY,
	size bigint NOT NULL,
	data bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS perfbot_fleet_builds (
	key text PRIMARY KEY,       -- package build's key: commit, command, variant, environment
	commit_hash text NOT NULL,
	variant text NOT NULL,
	class text NOT NULL,
	machine text NOT NULL,
	status text NOT NULL,       -- store.BuildStatus
	error text NOT NULL,
	log_sha256 text NOT NULL,
	artifacts jsonb NOT NULL,   -- artifact path -> sha256
	built timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS perfbot_fleet_claims (
	job text NOT NULL,          -- a run key: job, commit, variant, run number
	commit_hash text NOT NULL,
	variant text NOT NULL,
	idx int NOT NULL,
	session text NOT NULL,      -- the measurement that takes it
	claimed timestamptz NOT NULL,
	PRIMARY KEY (job, commit_hash, variant, idx)
);
-- The worker process serving each machine: a random ID per process
-- (River's client ID ends with it), its host, and its heartbeat interval.
ALTER TABLE perfbot_fleet_machines ADD COLUMN IF NOT EXISTS instance text NOT NULL DEFAULT '';
ALTER TABLE perfbot_fleet_machines ADD COLUMN IF NOT EXISTS host text NOT NULL DEFAULT '';
ALTER TABLE perfbot_fleet_machines ADD COLUMN IF NOT EXISTS beat_ms bigint NOT NULL DEFAULT 5000;
-- A watch cycle's outcome, stored before its server lets go of the
-- cycle's liveness lock (watchrescue.go): an attempt that finds it
-- returns it instead of working the cycle again.
CREATE TABLE IF NOT EXISTS perfbot_fleet_watch_outputs (
	job_id bigint PRIMARY KEY,  -- the cycle's River job
	output jsonb NOT NULL,      -- WatchOutput
	stored timestamptz NOT NULL
);
`

// Migrate brings River's tables and the fleet's up to date, one process
// at a time (an advisory lock), so that a server and workers started
// together do not race.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	const lock = 0x70657266626f74 // "perfbot"
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lock); err != nil {
		return fmt.Errorf("fleet migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock) //nolint:errcheck
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrating River's tables: %w", err)
	}
	if _, err := conn.Exec(ctx, schema); err != nil {
		return fmt.Errorf("creating the fleet's tables: %w", err)
	}
	if _, err := conn.Exec(ctx, blobSchema); err != nil {
		return fmt.Errorf("creating the fleet's blob tables: %w", err)
	}
	return nil
}

// Machine is a registered benchmark machine.
type Machine struct {
	ID, Class   string
	CPUModel    string
	CPUs        int
	Kernel      string
	Compiler    string
	CPU         int
	Calibration string
	PID         int
	// Instance is the worker process's random ID (its River client ID
	// ends with it), Host its host, Beat its heartbeat interval.
	Instance  string
	Host      string
	Beat      time.Duration
	Started   time.Time
	Heartbeat time.Time
}

// Fresh is how many of its heartbeat intervals a worker's heartbeat
// stays fresh: while it is, no other process may register the machine
// (register), which a worker started again after a crash waits out.
const Fresh = 3

// register records m (again, after a restart) with a fresh heartbeat. It
// refuses when another process instance serves the machine and its
// heartbeat is fresh (within Fresh of its intervals): two live workers
// with one machine name would take each other's jobs for a dead
// worker's.
func register(ctx context.Context, pool *pgxpool.Pool, m Machine) error {
	var id string
	err := pool.QueryRow(ctx, `INSERT INTO perfbot_fleet_machines AS m
		(id, class, cpu_model, cpus, kernel, compiler, cpu, calibration, pid, instance, host, beat_ms, started, heartbeat)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now(), now())
		ON CONFLICT (id) DO UPDATE SET class = $2, cpu_model = $3, cpus = $4, kernel = $5, compiler = $6,
			cpu = $7, calibration = $8, pid = $9, instance = $10, host = $11, beat_ms = $12, started = now(), heartbeat = now()
		WHERE m.instance = $10 OR m.heartbeat <= now() - m.beat_ms * $13 * interval '1 millisecond'
		RETURNING id`,
		m.ID, m.Class, m.CPUModel, m.CPUs, m.Kernel, m.Compiler, m.CPU, m.Calibration, m.PID,
		m.Instance, m.Host, m.Beat.Milliseconds(), Fresh).Scan(&id)
	if !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	var pid int
	var host string
	var age, beat float64
	if err := pool.QueryRow(ctx, `SELECT pid, host, extract(epoch from now() - heartbeat), beat_ms / 1000.0
		FROM perfbot_fleet_machines WHERE id = $1`, m.ID).Scan(&pid, &host, &age, &beat); err != nil {
		return err
	}
	return fmt.Errorf("machine %s is already served by pid %d on host %s (its last heartbeat %.1fs ago): "+
		"start one worker per machine name (--machine), or, if that worker is gone, start this one again after %.0fs without its heartbeat",
		m.ID, pid, host, age, Fresh*beat)
}

// errReplaced says another worker process now serves the machine.
var errReplaced = errors.New("another worker process has registered this machine")

// heartbeat says that machine id is alive, served by process instance.
func heartbeat(ctx context.Context, pool *pgxpool.Pool, id, instance string) error {
	tag, err := pool.Exec(ctx, `UPDATE perfbot_fleet_machines SET heartbeat = now() WHERE id = $1 AND instance = $2`, id, instance)
	if err != nil || tag.RowsAffected() > 0 {
		return err
	}
	var pid int
	var host string
	err = pool.QueryRow(ctx, `SELECT pid, host FROM perfbot_fleet_machines WHERE id = $1`, id).Scan(&pid, &host)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("machine %s is not registered", id)
	case err != nil:
		return err
	}
	return fmt.Errorf("machine %s: %w (pid %d on host %s)", id, errReplaced, pid, host)
}

// Machines lists the registered machines, of class when it is not "".
// Age is measured by the database's clock, so the machines' clocks need
// not agree.
func Machines(ctx context.Context, pool *pgxpool.Pool, class string) ([]Machine, []time.Duration, error) {
	rows, err := pool.Query(ctx, `SELECT id, class, cpu_model, cpus, kernel, compiler, cpu, calibration, pid, instance, host, beat_ms,
			started, heartbeat,
			extract(epoch from now() - heartbeat)
		FROM perfbot_fleet_machines WHERE $1 = '' OR class = $1 ORDER BY id`, class)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var ms []Machine
	var ages []time.Duration
	for rows.Next() {
		var m Machine
		var age float64
		var beat int64
		if err := rows.Scan(&m.ID, &m.Class, &m.CPUModel, &m.CPUs, &m.Kernel, &m.Compiler, &m.CPU, &m.Calibration,
			&m.PID, &m.Instance, &m.Host, &beat, &m.Started, &m.Heartbeat, &age); err != nil {
			return nil, nil, err
		}
		m.Beat = time.Duration(beat) * time.Millisecond
		ms = append(ms, m)
		ages = append(ages, time.Duration(age*float64(time.Second)))
	}
	return ms, ages, rows.Err()
}

// fleetBuild is a build made in the fleet, as its build machine recorded
// it.
type fleetBuild struct {
	Key, Commit, Variant, Class, Machine string
	Status, Error                        string
	LogSHA                               string
	Artifacts                            map[string]string // path -> sha256
	Built                                time.Time
}

// putBuild records build b under its key and returns the record the
// key holds now: the first successful build of a key wins for good (a
// second build of the key, on another machine or after River forgot the
// first job, may differ in its artifacts' bytes, or fail for a transient
// reason), so that every round of a measurement runs the same binary; a
// failed record is replaced by any later build.
func putBuild(ctx context.Context, pool *pgxpool.Pool, b *fleetBuild) (*fleetBuild, error) {
	arts, err := json.Marshal(b.Artifacts)
	if err != nil {
		return nil, err
	}
	_, err = pool.Exec(ctx, `INSERT INTO perfbot_fleet_builds AS b
		(key, commit_hash, variant, class, machine, status, error, log_sha256, artifacts, built)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now())
		ON CONFLICT (key) DO UPDATE SET machine = $5, status = $6, error = $7, log_sha256 = $8, artifacts = $9, built = now()
		WHERE b.status <> 'ok'`,
		b.Key, b.Commit, b.Variant, b.Class, b.Machine, b.Status, b.Error, b.LogSHA, arts)
	if err != nil {
		return nil, err
	}
	return getBuild(ctx, pool, b.Key)
}

func getBuild(ctx context.Context, pool *pgxpool.Pool, key string) (*fleetBuild, error) {
	b := &fleetBuild{Key: key}
	var arts []byte
	err := pool.QueryRow(ctx, `SELECT commit_hash, variant, class, machine, status, error, log_sha256, artifacts, built
		FROM perfbot_fleet_builds WHERE key = $1`, key).Scan(&b.Commit, &b.Variant, &b.Class, &b.Machine, &b.Status,
		&b.Error, &b.LogSHA, &arts, &b.Built)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("build %s is not in the fleet's database", key)
	}
	if err != nil {
		return nil, err
	}
	return b, json.Unmarshal(arts, &b.Artifacts)
}

// Absent says, for a submitter about to wait, when no live machine of
// class is registered (no heartbeat within deadAfter, 30 s when 0): the
// job then waits in the queue until a worker of the class starts. It
// returns "" when one is alive.
func Absent(ctx context.Context, pool *pgxpool.Pool, class string, deadAfter time.Duration) (string, error) {
	if deadAfter <= 0 {
		deadAfter = 30 * time.Second
	}
	ms, ages, err := Machines(ctx, pool, class)
	if err != nil {
		return "", err
	}
	for i := range ms {
		if ages[i] < deadAfter {
			return "", nil
		}
	}
	if len(ms) == 0 {
		return fmt.Sprintf("no machine of class %s is registered: the job waits in the queue until one starts (perfbot worker --db URL --class %s)", class, class), nil
	}
	return fmt.Sprintf("no machine of class %s is alive (%d registered, none with a heartbeat in the last %v): the job waits in the queue until one comes back", class, len(ms), deadAfter), nil
}
