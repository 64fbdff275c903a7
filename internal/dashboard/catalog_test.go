package dashboard

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// TestLateJobs serves an empty fleet database (perfbot serve --db before
// the first submit) and stores jobs after the server started: a job's
// pages find it at once (a lookup miss asks the store again), and the
// overview and /api/jobs list every job, also while pages are served
// concurrently as jobs arrive (go test -race checks the catalog's lock).
func TestLateJobs(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenURL(ctx, testutil.Postgres(t), store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := New(ctx, Config{Open: []*store.Store{st}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	jobs := func() []JobSummary {
		t.Helper()
		code, body := serve(h, "/api/jobs")
		var js JobList
		if code != 200 || jsonUnmarshal(body, &js) != nil || js.Version != APIVersion {
			t.Fatalf("/api/jobs: %d %s", code, body)
		}
		schematest.ValidateJSON(t, "dashboard-jobs", body)
		return js.Jobs
	}
	if js := jobs(); len(js) != 0 {
		t.Fatalf("an empty database lists %d jobs", len(js))
	}
	spec := testutil.HistorySpec{Job: "0123456789abcdef", Commits: 4, PerCycle: 4, Rounds: 2, Level: func(int) float64 { return 1 }}
	testutil.SyntheticHistory(t, st, spec)
	if code, body := serve(h, "/api/jobs/"+spec.Job+"/history"); code != 200 {
		t.Fatalf("the history of a job stored after the server started: %d %s", code, body)
	}

	// More jobs while pages are served.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				for _, p := range []string{"/api/jobs", "/", "/api/jobs/" + spec.Job + "/history", fmt.Sprintf("/api/jobs/fedcba98765432%02d/history", g)} {
					if code, body := serve(h, p); code != 200 && code != 404 {
						errs <- fmt.Errorf("GET %s: %d %s", p, code, body)
					}
				}
			}
		}()
	}
	var keys []string
	for g := range 4 {
		k := fmt.Sprintf("fedcba98765432%02d", g)
		testutil.SyntheticHistory(t, st, testutil.HistorySpec{Job: k, Commits: 2, PerCycle: 2, Rounds: 2, Level: func(int) float64 { return 1 }})
		keys = append(keys, k)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	keys = append(keys, spec.Job)
	js := jobs()
	var got, ids []string
	for _, j := range js {
		got, ids = append(got, j.Key), append(ids, j.ID)
	}
	slices.Sort(got)
	slices.Sort(keys)
	slices.Sort(ids)
	if !slices.Equal(got, keys) || len(slices.Compact(ids)) != len(keys) {
		t.Errorf("/api/jobs lists keys %v (ids %v), want each of %v once", got, ids, keys)
	}
}
