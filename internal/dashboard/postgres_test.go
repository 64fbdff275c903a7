package dashboard

import (
	"context"
	"os"
	"testing"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

func TestMain(m *testing.M) { os.Exit(testutil.RunWithPostgres(m)) }

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
	testutil.SyntheticHistory(t, st, spec)
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
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.TestedVariants(ctx, spec.Job); err != nil {
		t.Errorf("the server closed the store its caller opened: %v", err)
	}
}
