package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/riverqueue/river"

	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestFleetQueue: a page's compare, bisect and triage actions become the
// fleet's River jobs with the job's spec and the class (a real River
// client on a real PostgreSQL, not started, so the jobs wait in the
// queue); Queued lists them; rerun is not the fleet's and wraps
// ErrNotQueued.
func TestFleetQueue(t *testing.T) {
	ctx := context.Background()
	url := testutil.Postgres(t)
	dir := t.TempDir()
	jobFile := filepath.Join(dir, "job.yaml")
	data := []byte(`repo: .
build: {command: make bench, artifacts: [bench]}
run: {command: ./bench}
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`)
	if err := os.WriteFile(jobFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	pool, err := fleet.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	results, err := fleet.OpenResults(ctx, url, filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer results.Close()
	srv, err := fleet.NewServer(ctx, fleet.ServerConfig{Pool: pool, Results: results, Dir: filepath.Join(dir, "server")})
	if err != nil {
		t.Fatal(err)
	}
	q := FleetQueue{Server: srv, Class: "epyc"}
	a, b := "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	base := Action{JobFile: jobFile, JobName: "job", Commits: []string{a, b}}

	cmp := base
	cmp.Kind = CompareAction
	id, err := q.Enqueue(ctx, cmp)
	if err != nil {
		t.Fatalf("Enqueue(compare): %v", err)
	}
	bis := base
	bis.Kind, bis.Metric = BisectAction, "work_ms"
	bid, err := q.Enqueue(ctx, bis)
	if err != nil {
		t.Fatalf("Enqueue(bisect): %v", err)
	}
	tri := base
	tri.Kind, tri.Metric = TriageAction, "work_ms"
	tid, err := q.Enqueue(ctx, tri)
	if err != nil {
		t.Fatalf("Enqueue(triage): %v", err)
	}
	for _, tc := range []struct {
		id   string
		kind string
	}{{id, fleet.CompareArgs{}.Kind()}, {bid, fleet.BisectArgs{}.Kind()}, {tid, fleet.TriageArgs{}.Kind()}} {
		n, err := strconv.ParseInt(tc.id, 10, 64)
		if err != nil {
			t.Fatalf("id %q: %v", tc.id, err)
		}
		row, err := srv.River.JobGet(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if row.Kind != tc.kind || row.Queue != fleet.QueueControl {
			t.Errorf("job %d: kind %s in queue %s, want %s in %s", n, row.Kind, row.Queue, tc.kind, fleet.QueueControl)
		}
	}
	res, err := srv.River.JobList(ctx, river.NewJobListParams().Kinds(fleet.CompareArgs{}.Kind()))
	if err != nil || len(res.Jobs) != 1 {
		t.Fatalf("compare jobs: %v, %v", res, err)
	}
	queued, err := q.Queued(ctx)
	if err != nil || len(queued) != 3 {
		t.Fatalf("Queued = %+v, %v; want the three actions", queued, err)
	}
	// Each carries its job and commits, so "running" names them.
	for _, qd := range queued {
		if qd.Action.JobName != "job" || len(qd.Action.Commits) != 2 || qd.Action.Commits[1] != b ||
			(qd.Action.Kind != CompareAction) != (qd.Action.Metric == "work_ms") || !strings.Contains(qd.Action.Command(), "job.yaml") {
			t.Errorf("queued %+v: want the action's job, commits and metric (command %q)", qd.Action, qd.Action.Command())
		}
	}
	// No worker of the class: a submitter is told so before it waits.
	if note, err := fleet.Absent(ctx, pool, "epyc", 0); err != nil || !strings.Contains(note, "no machine of class epyc is registered") {
		t.Errorf("Absent = %q, %v", note, err)
	}
	for _, k := range []ActionKind{RerunAction} {
		x := base
		x.Kind = k
		if _, err := q.Enqueue(ctx, x); !errors.Is(err, ErrNotQueued) {
			t.Errorf("Enqueue(%s) = %v, want ErrNotQueued (the page shows the command)", k, err)
		}
	}
	// What fleet.Submit refuses is the client's mistake: 400 with its
	// message, not a 500.
	noMetric := base
	noMetric.Kind = BisectAction
	if _, err := q.Enqueue(ctx, noMetric); err == nil {
		t.Error("Enqueue(bisect without a metric): no error")
	} else if code, msg := status(fmt.Errorf("enqueueing: %w", err)); code != http.StatusBadRequest || !strings.Contains(msg, "metric") {
		t.Errorf("Enqueue(bisect without a metric): %d %q, want 400 naming the metric", code, msg)
	}
	gone := base
	gone.Kind, gone.JobFile = CompareAction, filepath.Join(dir, "missing.yaml")
	if _, err := q.Enqueue(ctx, gone); err == nil {
		t.Error("Enqueue with a missing job file: no error")
	}
}
