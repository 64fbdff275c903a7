package fleet

// Which machine takes a measurement's rounds.

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"
)

// live lists the machines of class whose heartbeat is recent, except
// those in skip.
func (c *Client) live(ctx context.Context, class string, skip []string) ([]string, error) {
	ms, ages, err := Machines(ctx, c.Pool, class)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, m := range ms {
		if ages[i] < c.DeadAfter && !slices.Contains(skip, m.ID) {
			out = append(out, m.ID)
		}
	}
	return out, nil
}

// alive reports whether machine id has sent a heartbeat within DeadAfter.
func (c *Client) alive(ctx context.Context, id string) (bool, error) {
	var age float64
	err := c.Pool.QueryRow(ctx, `SELECT extract(epoch from now() - heartbeat) FROM perfbot_fleet_machines WHERE id = $1`, id).Scan(&age)
	if err != nil {
		return false, err
	}
	return time.Duration(age*float64(time.Second)) < c.DeadAfter, nil
}

// gone reports whether the worker taking the running job row is gone,
// and names its machine: the machine has sent no heartbeat for DeadAfter
// (it died, or it lost the database and cancelled the job), or its worker
// was started again since it took the job (another process instance: the
// one that took it was killed; instances are random IDs, not pids, which
// repeat in containers). River's attempted_by says which worker process
// took the job (workerClientID); a job that is not running, or was taken
// by another client, is not gone.
func (c *Client) gone(ctx context.Context, row *rivertype.JobRow) (string, bool, error) {
	if row.State != rivertype.JobStateRunning || len(row.AttemptedBy) == 0 {
		return "", false, nil
	}
	machine, instance, ok := workerOf(row.AttemptedBy[len(row.AttemptedBy)-1])
	if !ok {
		return "", false, nil
	}
	var age float64
	var registered string
	err := c.Pool.QueryRow(ctx, `SELECT extract(epoch from now() - heartbeat), instance FROM perfbot_fleet_machines WHERE id = $1`,
		machine).Scan(&age, &registered)
	if errors.Is(err, pgx.ErrNoRows) {
		return machine, false, nil
	} else if err != nil {
		return "", false, err
	}
	return machine, time.Duration(age*float64(time.Second)) >= c.DeadAfter || registered != instance, nil
}

// pick chooses the machine of a measurement's rounds: the machine kept
// for pin (its session, or Remote.On's key) while it lives, else the live machine of the class with the
// fewest rounds queued on it by this process (waiting while there is
// none). The n rounds are counted on it until released.
func (c *Client) pick(ctx context.Context, class, pin string, n int) (string, error) {
	told := false
	for {
		live, err := c.live(ctx, class, nil)
		if err != nil {
			return "", err
		}
		c.mu.Lock()
		m := c.pins[pin]
		if m == "" || !slices.Contains(live, m) {
			m = ""
			for _, id := range live {
				if m == "" || c.assigned[id] < c.assigned[m] {
					m = id
				}
			}
		}
		if m != "" {
			c.pins[pin] = m
			c.assigned[m] += n
			c.mu.Unlock()
			return m, nil
		}
		c.mu.Unlock()
		if err := c.awaitLive(ctx, class, &told); err != nil {
			return "", err
		}
	}
}

// release counts n rounds on machine as no longer queued by this process.
func (c *Client) release(machine string, n int) {
	c.mu.Lock()
	c.assigned[machine] -= n
	c.mu.Unlock()
}

// unpin forgets the machine kept for pin.
func (c *Client) unpin(pin string) {
	c.mu.Lock()
	delete(c.pins, pin)
	c.mu.Unlock()
}

// Pins is how many pins the server's client keeps (for tests).
func (s *Server) Pins() int {
	s.client.mu.Lock()
	defer s.client.mu.Unlock()
	return len(s.client.pins)
}

// awaitLive waits a second for a machine of class to come alive, saying
// so in the log the first time (told); it ends with ctx.
func (c *Client) awaitLive(ctx context.Context, class string, told *bool) error {
	if !*told {
		c.Log("waiting for a live machine of class %s", class)
		*told = true
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Second):
		return nil
	}
}
