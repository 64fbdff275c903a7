package fleet

// Measurements bound to one machine: a triage's experiments.

import (
	"context"
	"fmt"
	"slices"
)

// MachineLostError ends a bound Remote's measurement when its machine
// dies (no heartbeat for DeadAfter): its rounds there are cancelled, and
// none moves to another machine. The runs the machine stored are kept.
type MachineLostError struct {
	Machine, Class string
	Rounds         int // rounds it had not finished
}

func (e *MachineLostError) Error() string {
	return fmt.Sprintf("machine %s of class %s stopped answering with %d rounds unfinished", e.Machine, e.Class, e.Rounds)
}

// Bind returns the Remote whose rounds all go to machine, and whose runs
// are the machine's own in the store (JobSpec.Bound): a measurement of
// it never moves to another machine; it ends with a *MachineLostError
// when machine dies. Its builds are the class's, as r's.
func (r *Remote) Bind(machine string) *Remote {
	b := *r
	b.spec.Bound, b.bound, b.pin = machine, machine, ""
	return &b
}

// Spec is the job spec the Remote's rounds carry (with the bound machine,
// if any): the job to measure is spec.Load's, so that its key is the
// machine's own.
func (r *Remote) Spec() JobSpec { return r.spec }

// machine returns the machine of a measurement's next rounds (pin's, see
// pick), counting n rounds on it; for a bound Remote its machine, or a
// *MachineLostError when it is dead.
func (r *Remote) machine(ctx context.Context, pin string, n int) (string, error) {
	if r.bound == "" {
		return r.c.pick(ctx, r.class, pin, n)
	}
	alive, err := r.c.alive(ctx, r.bound)
	if err != nil {
		return "", err
	}
	if !alive {
		return "", &MachineLostError{Machine: r.bound, Class: r.class, Rounds: n}
	}
	r.c.mu.Lock()
	r.c.assigned[r.bound] += n
	r.c.mu.Unlock()
	return r.bound, nil
}

// Quietest chooses a live machine of class for a bound measurement, except
// those in skip while another lives: the one with the fewest rounds queued or running on it
// (ties: the first by name), waiting while there is none.
func (c *Client) Quietest(ctx context.Context, class string, skip []string) (string, error) {
	c.init()
	told := false
	for {
		all, err := c.live(ctx, class, nil)
		if err != nil {
			return "", err
		}
		live := slices.DeleteFunc(slices.Clone(all), func(m string) bool { return slices.Contains(skip, m) })
		if len(live) == 0 {
			// Only a machine that was lost is back: take it again.
			live = all
		}
		if len(live) > 0 {
			busy, err := c.busy(ctx, live)
			if err != nil {
				return "", err
			}
			slices.SortStableFunc(live, func(a, b string) int { return busy[a] - busy[b] })
			return live[0], nil
		}
		if err := c.awaitLive(ctx, class, &told); err != nil {
			return "", err
		}
	}
}

// busy counts the round jobs queued or running on each of machines.
func (c *Client) busy(ctx context.Context, machines []string) (map[string]int, error) {
	queues := make([]string, len(machines))
	for i, m := range machines {
		queues[i] = MachineQueue(m)
	}
	rows, err := c.Pool.Query(ctx, `SELECT queue, count(*) FROM river_job
		WHERE queue = ANY($1) AND state IN ('available', 'running', 'retryable', 'scheduled') GROUP BY queue`, queues)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var q string
		var n int
		if err := rows.Scan(&q, &n); err != nil {
			return nil, err
		}
		out[q[len("machine_"):]] = n
	}
	return out, rows.Err()
}
