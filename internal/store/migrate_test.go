package store_test

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// TestMigrateFromVersion1 builds a database at schema version 1 with one
// build in it, then opens it with the current code.
func TestMigrateFromVersion1(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "perfbot.db")
	db, err := sql.Open("sqlite", store.DSN(path, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.MigrateTo(ctx, db, path, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO builds (build_key, commit_hash, variant, status, artifact_dir, log_path, error, started_unix_ns, duration_ns)
		VALUES ('b1', 'c1', '', 'ok', '/a', '/l', '', 1700000000000000000, 5000000000)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version`); err != nil {
		t.Fatal(err)
	}
	var version int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != 1 {
		t.Fatalf("built database has version %d, %v; want 1", version, err)
	}
	if _, err := db.Exec(`SELECT 1 FROM states`); err == nil {
		t.Fatal("schema version 1 already has the states table")
	}
	db.Close()

	s := open(t, dir)
	b, err := s.GetBuild(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if b.Commit != "c1" || b.Duration != 5*time.Second || !b.Started.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("migrated build = %+v", b)
	}
	if err := s.PutState(ctx, "bisect", "k", []byte("x")); err != nil {
		t.Errorf("PutState after migrating: %v", err)
	}
	db, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != store.SchemaVersion {
		t.Errorf("migrated database has version %d, %v; want %d", version, err, store.SchemaVersion)
	}
}

func TestNewerSchemaRejected(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "perfbot.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, store.SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = store.Open(dir)
	if !errors.Is(err, store.ErrNewerSchema) {
		t.Fatalf("Open of a newer database = %v, want ErrNewerSchema", err)
	}
	for _, want := range []string{path, "newer", fmt.Sprint(store.SchemaVersion + 1)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// v3Run is a run as perfbot with schema version 3 stored it: with a
// session, without a machine.
type v3Run struct {
	commit  string
	idx     int
	status  store.RunStatus
	session string
	values  []metric.Value
}

// v3Runs are the runs TestMigrateFromVersion3 stores: two commits, OK and
// failed runs, runs of two sessions and of none, a metric with several
// values per run, and a run without values.
func v3Runs() []v3Run {
	var runs []v3Run
	for _, c := range []string{"c1", "c2"} {
		for i := 1; i <= 6; i++ {
			r := v3Run{commit: c, idx: i, status: store.RunOK, session: fmt.Sprintf("session-%d", (i-1)/3)}
			for k, name := range []string{"time", "rss", "time", "ops"} {
				better := metric.LowerIsBetter
				if name == "ops" {
					better = metric.HigherIsBetter
				}
				r.values = append(r.values, metric.Value{Name: name, Unit: map[string]string{"time": "ns", "rss": "KiB", "ops": "ops/s"}[name],
					Better: better, Value: float64(1000*i + 10*k)})
			}
			switch i {
			case 1:
				r.session = "" // stored before sessions were recorded
			case 4:
				r.status = store.RunCrashed
			case 5:
				r.status, r.values = store.RunNoMetric, nil
			}
			runs = append(runs, r)
		}
	}
	return runs
}

// oldDB is a database of one dialect that a test builds at an older
// schema version with that version's SQL, then opens with the current
// code.
type oldDB struct {
	connect func() *sql.DB          // a pool on the database, for building and checking (statements with ? placeholders)
	version func(db *sql.DB) int    // the schema version
	build   func(db *sql.DB, v int) // migrates to version v
	open    func() *store.Store     // opens the store with the current code
}

// TestMigrateFromVersion3 builds a database at schema version 3 with runs
// and values in it, written with version 3's SQL, then opens it with the
// current code: every run and value is kept, and runs read the machine and
// the version "".
func TestMigrateFromVersion3(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "perfbot.db")
	testMigrateFromVersion3(t, oldDB{
		connect: func() *sql.DB {
			db, err := sql.Open("sqlite", store.DSN(path, ""))
			if err != nil {
				t.Fatal(err)
			}
			return db
		},
		version: func(db *sql.DB) (v int) {
			if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
				t.Fatal(err)
			}
			return v
		},
		build: func(db *sql.DB, v int) {
			if err := store.MigrateTo(t.Context(), db, path, v); err != nil {
				t.Fatal(err)
			}
		},
		open: func() *store.Store { return open(t, dir) },
	})
}

func testMigrateFromVersion3(t *testing.T, o oldDB) {
	ctx := t.Context()
	db := o.connect()
	o.build(db, 3)
	metricIDs := map[string]int64{}
	for _, r := range v3Runs() {
		var id int64
		if err := db.QueryRow(`INSERT INTO runs (job_key, commit_hash, variant, idx, status, reason, cpu, started_unix_ns,
				wall_ns, user_ns, sys_ns, max_rss_kib, exit_code, stdout_path, stderr_path, recorded_unix_ns, session)
			VALUES ('job', ?, '', ?, ?, '', 2, 1700000000000000000, 1000000000, 900000000, 100000000, 1024, 0, '/o', '/e', 1700000001000000000, ?)
			RETURNING id`, r.commit, r.idx, string(r.status), r.session).Scan(&id); err != nil {
			t.Fatal(err)
		}
		for seq, v := range r.values {
			mid, ok := metricIDs[v.Name]
			if !ok {
				if err := db.QueryRow(`INSERT INTO metrics (job_key, name, unit, better) VALUES ('job', ?, ?, ?) RETURNING id`,
					v.Name, v.Unit, int(v.Better)).Scan(&mid); err != nil {
					t.Fatal(err)
				}
				metricIDs[v.Name] = mid
			}
			if _, err := db.Exec(`INSERT INTO run_values (run_id, seq, metric_id, value) VALUES (?, ?, ?, ?)`, id, seq, mid, v.Value); err != nil {
				t.Fatal(err)
			}
		}
	}
	if version := o.version(db); version != 3 {
		t.Fatalf("built database has version %d; want 3", version)
	}
	if _, err := db.Exec(`SELECT machine FROM runs`); err == nil {
		t.Fatal("schema version 3 already has runs.machine")
	}
	counts := func(db *sql.DB) (runs, values int) {
		t.Helper()
		if err := db.QueryRow(`SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM run_values)`).Scan(&runs, &values); err != nil {
			t.Fatal(err)
		}
		return runs, values
	}
	runs3, values3 := counts(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := o.open()
	if s.Created() || s.Notice() != "" {
		t.Errorf("migrated store: Created() = %v, Notice() = %q; want false, \"\"", s.Created(), s.Notice())
	}
	want := v3Runs()
	for _, c := range []string{"c1", "c2"} {
		got, err := s.Runs(ctx, "job", c, "")
		if err != nil {
			t.Fatal(err)
		}
		var wantC []v3Run
		for _, r := range want {
			if r.commit == c {
				wantC = append(wantC, r)
			}
		}
		if len(got) != len(wantC) {
			t.Fatalf("commit %s: %d runs after migrating, want %d", c, len(got), len(wantC))
		}
		for i, r := range got {
			w := wantC[i]
			if r.Index != w.idx || r.Status != w.status || r.Session != w.session || r.Machine != "" || r.Version != "" ||
				r.CPU != 2 || r.Usage.MaxRSSKiB != 1024 || !r.Started.Equal(time.Unix(1700000000, 0)) ||
				!slices.Equal(r.Values, w.values) {
				t.Errorf("commit %s: run after migrating = %+v, want %+v with machine \"\"", c, r, w)
			}
		}
	}
	samples, err := s.Samples(ctx, "job", []string{"c1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	wantTime := []store.Sample{
		{Run: 1, Value: 1000}, {Run: 1, Value: 1020},
		{Run: 2, Value: 2000, Session: "session-0"}, {Run: 2, Value: 2020, Session: "session-0"},
		{Run: 3, Value: 3000, Session: "session-0"}, {Run: 3, Value: 3020, Session: "session-0"},
		{Run: 6, Value: 6000, Session: "session-1"}, {Run: 6, Value: 6020, Session: "session-1"},
	}
	if got := samples["c1"]["time"]; !slices.Equal(got, wantTime) {
		t.Errorf("samples of time after migrating = %v, want %v", got, wantTime)
	}

	// New runs record their machine and version beside the old ones.
	r := &store.RunRecord{RunKey: store.RunKey{Job: "job", Commit: "c1", Index: 7}, Status: store.RunOK,
		Session: "s", Machine: "bench-1", Version: "v1.2.0", Values: []metric.Value{{Name: "time", Unit: "ns", Better: metric.LowerIsBetter, Value: 7}}}
	if err := s.PutRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Runs(ctx, "job", "c1", ""); err != nil || len(got) != 7 || got[6].Machine != "bench-1" || got[0].Machine != "" ||
		got[6].Version != "v1.2.0" || got[0].Version != "" {
		t.Errorf("after putting a new run, Runs = %+v, %v", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	db = o.connect()
	defer db.Close()
	if version := o.version(db); version != store.SchemaVersion {
		t.Errorf("migrated database has version %d; want %d", version, store.SchemaVersion)
	}
	if runs, values := counts(db); runs != runs3+1 || values != values3+1 {
		t.Errorf("after migrating and putting one run of one value: %d runs, %d values; want %d, %d", runs, values, runs3+1, values3+1)
	}
	var blank int
	if err := db.QueryRow(`SELECT count(*) FROM runs WHERE machine = ''`).Scan(&blank); err != nil || blank != runs3 {
		t.Errorf("%d runs with machine '', %v; want the %d old ones", blank, err, runs3)
	}
}
