package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/internal/testutil"
)

// TestGone: the server takes a running job's worker for gone when its
// machine's heartbeat is DeadAfter old or when the machine's worker is
// another process than the one River says took the job (restarted), and
// only then.
func TestGone(t *testing.T) {
	ctx := context.Background()
	pool, err := Connect(ctx, testutil.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := register(ctx, pool, Machine{ID: "m-1", Class: "x", PID: 100}); err != nil {
		t.Fatal(err)
	}
	c := &Client{Pool: pool, DeadAfter: 30 * time.Second}
	c.init()
	running := func(by ...string) *rivertype.JobRow {
		return &rivertype.JobRow{State: rivertype.JobStateRunning, AttemptedBy: by}
	}
	for _, tc := range []struct {
		what string
		row  *rivertype.JobRow
		gone bool
	}{
		{"taken by the machine's worker", running(workerClientID("m-1", 7), workerClientID("m-1", 100)), false},
		{"taken by an earlier worker of the machine", running(workerClientID("m-1", 100), workerClientID("m-1", 99)), true},
		{"not running", &rivertype.JobRow{State: rivertype.JobStateAvailable, AttemptedBy: []string{workerClientID("m-1", 99)}}, false},
		{"taken by the server", running("server.100"), false},
		{"taken by an unregistered machine", running(workerClientID("m-2", 100)), false},
	} {
		m, gone, err := c.gone(ctx, tc.row)
		if err != nil || gone != tc.gone {
			t.Errorf("%s: gone %v (%v), want %v", tc.what, gone, err, tc.gone)
		}
		if tc.gone && m != "m-1" {
			t.Errorf("%s: machine %q, want m-1", tc.what, m)
		}
	}
	if _, err := pool.Exec(ctx, `UPDATE perfbot_fleet_machines SET heartbeat = now() - interval '31 seconds'`); err != nil {
		t.Fatal(err)
	}
	if _, gone, err := c.gone(ctx, running(workerClientID("m-1", 100))); err != nil || !gone {
		t.Errorf("a machine without a heartbeat for 31 s: gone %v (%v), want true", gone, err)
	}
	for _, id := range []string{"worker.m-1", "worker.M1.3", "worker..3", "worker.m1.x"} {
		if m, pid, ok := workerOf(id); ok {
			t.Errorf("workerOf(%q) = %q, %d: want no worker", id, m, pid)
		}
	}
}
