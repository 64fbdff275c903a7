package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/metric"
	runner "github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

func TestMain(m *testing.M) {
	runner.Main() // watch's runs re-execute this binary
	os.Exit(testutil.RunWithPostgres(m))
}

// TestPostgresStore serves a PostgreSQL store the caller opened (as the
// fleet's server will, perfbot serve --db): its jobs and history, and a
// history that grows after a cycle is seen at once (a database store has
// no files whose change says so: its tested commits are asked each time).
func TestPostgresStore(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenURL(ctx, testutil.Postgres(t), store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	spec := testutil.HistorySpec{Job: "0123456789abcdef", Commits: 12, PerCycle: 4, Rounds: 3, Level: func(i int) float64 {
		if i >= 6 {
			return 1.5
		}
		return 1
	}}
	hashes := testutil.SyntheticHistory(t, st, spec)
	srv, err := New(ctx, Config{Open: []*store.Store{st}})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	var hv HistoryView
	get := func() {
		t.Helper()
		code, body := serve(h, "/api/jobs/synthetic/history")
		if code != 200 {
			t.Fatalf("history: %d %s", code, body)
		}
		if err := jsonUnmarshal(body, &hv); err != nil {
			t.Fatal(err)
		}
	}
	get()
	if hv.Total != 12 || hv.Points[6].Step < 30 {
		t.Fatalf("history of %d points, step into 6 %+.1f%%", hv.Total, hv.Points[6].Step)
	}
	spec.Commits = 16
	testutil.SyntheticHistory(t, st, spec)
	get()
	if hv.Total != 16 {
		t.Errorf("after a cycle of 4 more commits the history has %d points, want 16", hv.Total)
	}
	t.Run("Machines", func(t *testing.T) { testCompareMachines(t, h, st, spec.Job, hashes) })
	t.Run("Actions", func(t *testing.T) { testDatabaseActions(t, st, spec.Job, hashes) })
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.TestedVariants(ctx, spec.Job); err != nil {
		t.Errorf("the server closed the store its caller opened: %v", err)
	}
}

// testDatabaseActions: the commands offered for a job of a database store
// name no --store (which takes a folder): comparisons and bisections are
// submitted to the fleet's database (without its password, nor any
// password-like parameter: sslpassword), a triage runs
// where the job's repository is and says where its results go.
func testDatabaseActions(t *testing.T, st *store.Store, key string, hashes []string) {
	ctx := context.Background()
	if err := st.PutJob(ctx, key, "synthetic", []byte(`{"Name":"synthetic","File":"/srv/jobs/bench.yaml"}`)); err != nil {
		t.Fatal(err)
	}
	srv, err := New(ctx, Config{Open: []*store.Store{st}, DB: "postgres://perf:s3cret@db:5432/perfbot?sslmode=disable&sslpassword=k3yp4ss", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a, b := hashes[5][:12], hashes[6][:12]
	for _, tt := range []struct{ body, want string }{
		{`{"kind": "compare", "job": "synthetic", "commits": ["` + a + `", "` + b + `"]}`,
			"perfbot submit compare --db 'postgres://perf@db:5432/perfbot?sslmode=disable' --class CLASS /srv/jobs/bench.yaml " + a + " " + b +
				"  # the database's password: PGPASSWORD or ~/.pgpass"},
		{`{"kind": "bisect", "job": "synthetic", "commits": ["` + a + `", "` + b + `"], "metric": "work_ms"}`,
			"perfbot submit bisect --db 'postgres://perf@db:5432/perfbot?sslmode=disable' --class CLASS /srv/jobs/bench.yaml --good " + a + " --bad " + b +
				" --metric work_ms  # the database's password: PGPASSWORD or ~/.pgpass"},
		{`{"kind": "triage", "job": "synthetic", "commits": ["` + a + `", "` + b + `"], "metric": "work_ms"}`,
			"perfbot submit triage --db 'postgres://perf@db:5432/perfbot?sslmode=disable' --class CLASS /srv/jobs/bench.yaml " + a + " " + b +
				" --metric work_ms  # the database's password: PGPASSWORD or ~/.pgpass"},
	} {
		req := httptest.NewRequest("POST", "/api/actions", strings.NewReader(tt.body))
		req.Header.Set("Authorization", "Bearer tok")
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		var na struct{ Command string }
		if w.Code != http.StatusNotImplemented || json.Unmarshal(w.Body.Bytes(), &na) != nil || na.Command != tt.want {
			t.Errorf("%s: %d %s\nwant the command %q", tt.body, w.Code, w.Body, tt.want)
		}
	}
}

// testCompareMachines: the compare page says which machines took each
// commit's runs, and warns when they are more than one.
func testCompareMachines(t *testing.T, h http.Handler, st *store.Store, key string, hashes []string) {
	ctx := context.Background()
	path := "/api/compare?job=synthetic&c=" + hashes[5][:12] + "&c=" + hashes[6][:12]
	get := func() CompareView {
		t.Helper()
		code, body := serve(h, path)
		var cv CompareView
		if code != 200 || jsonUnmarshal(body, &cv) != nil {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		return cv
	}
	cv := get()
	for _, n := range cv.Notes {
		if strings.Contains(n, "machines") {
			t.Errorf("runs of one machine: %q", n)
		}
	}
	// A fleet's worker measures the changed commit again.
	for r := range 3 {
		rec := &store.RunRecord{RunKey: store.RunKey{Job: key, Commit: hashes[6], Index: 100 + r}, Status: store.RunOK, CPU: -1,
			Session: "fleet-1", Machine: "bench-07", Values: []metric.Value{{Name: "work_ms", Unit: "ms", Better: metric.LowerIsBetter, Value: 0.8}}}
		if err := st.PutRun(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	cv = get()
	if m := cv.Commits[1].Machines; len(m) != 2 || m[0] != "" || m[1] != "bench-07" || len(cv.Commits[0].Machines) != 1 {
		t.Errorf("machines %q and %q", cv.Commits[0].Machines, m)
	}
	if !slices.ContainsFunc(cv.Notes, func(n string) bool {
		return strings.Contains(n, "come from 2 machines") && strings.Contains(n, "bench-07")
	}) {
		t.Errorf("no note says the runs come from 2 machines: %q", cv.Notes)
	}
	code, body := serve(h, strings.Replace(path, "/api/compare", "/compare", 1))
	if code != 200 || !strings.Contains(string(body), "come from 2 machines") || !strings.Contains(string(body), `<span class="machines">(not recorded), bench-07</span>`) {
		t.Errorf("the compare page: %d\n%s", code, body)
	}
}
