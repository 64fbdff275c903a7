package fleet

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// TestGone: the server takes a running job's worker for gone when its
// machine's heartbeat is DeadAfter old or when the machine's worker is
// another process instance than the one River says took the job
// (restarted, whatever its pid), and only then. A second process may
// register the machine only once the first one's heartbeat is no longer
// fresh; the first one's heartbeat then says it was replaced.
func TestGone(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	first := Machine{ID: "m-1", Class: "x", PID: 100, Host: "h1", Instance: "aa11", Beat: 5 * time.Second}
	if err := register(ctx, pool, first); err != nil {
		t.Fatal(err)
	}
	// A second live process with the same machine name is refused, with
	// the same pid too (a container's pid 1).
	second := first
	second.Instance = "bb22"
	err := register(ctx, pool, second)
	if want := "machine m-1 is already served by pid 100 on host h1"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a second process registering m-1: %v, want %q", err, want)
	}
	if err := heartbeat(ctx, pool, "m-1", "aa11"); err != nil {
		t.Fatalf("heartbeat of the first process: %v", err)
	}
	if err := register(ctx, pool, first); err != nil {
		t.Fatalf("the same process registering again: %v", err)
	}
	// Once its heartbeat is Fresh intervals old, the second takes over
	// and the first one's heartbeat says so.
	if _, err := pool.Exec(ctx, `UPDATE perfbot_fleet_machines SET heartbeat = now() - interval '16 seconds'`); err != nil {
		t.Fatal(err)
	}
	if err := register(ctx, pool, second); err != nil {
		t.Fatalf("registering m-1 after 16 s without a heartbeat: %v", err)
	}
	if err := heartbeat(ctx, pool, "m-1", "aa11"); !errors.Is(err, errReplaced) {
		t.Errorf("heartbeat of the replaced process: %v, want %v", err, errReplaced)
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
		{"taken by the machine's worker", running(workerClientID("m-1", "aa11"), workerClientID("m-1", "bb22")), false},
		{"taken by an earlier worker of the machine", running(workerClientID("m-1", "bb22"), workerClientID("m-1", "aa11")), true},
		{"not running", &rivertype.JobRow{State: rivertype.JobStateAvailable, AttemptedBy: []string{workerClientID("m-1", "aa11")}}, false},
		{"taken by the server", running("server.100"), false},
		{"taken by an unregistered machine", running(workerClientID("m-2", "bb22")), false},
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
	if _, gone, err := c.gone(ctx, running(workerClientID("m-1", "bb22"))); err != nil || !gone {
		t.Errorf("a machine without a heartbeat for 31 s: gone %v (%v), want true", gone, err)
	}
	for _, id := range []string{"worker.m-1", "worker.M1.3", "worker..3", "worker.m1.x", "worker.m1."} {
		if m, inst, ok := workerOf(id); ok {
			t.Errorf("workerOf(%q) = %q, %q: want no worker", id, m, inst)
		}
	}
	if id := workerClientID("m-1", newInstance()); len(id) != len("worker.m-1.")+16 {
		t.Errorf("worker client ID %q: want a 16-digit instance", id)
	} else if m, inst, ok := workerOf(id); !ok || m != "m-1" || inst != id[len("worker.m-1."):] {
		t.Errorf("workerOf(%q) = %q, %q, %v", id, m, inst, ok)
	}
}
