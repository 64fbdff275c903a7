// How the simulated fleet places and times its work, as River's queues
// and the fleet's client do.

package sim

import (
	"slices"
	"strings"
	"time"
)

// admit queues the incoming requests, ordered by what they ask for.
func (f *Fleet) admit() {
	in := f.incoming
	f.incoming = nil
	slices.SortFunc(in, func(a, b *request) int { return strings.Compare(a.order, b.order) })
	for _, r := range in {
		switch {
		case r.build != nil:
			f.classQ = append(f.classQ, &qjob{build: r.build, dur: f.cfg.Build})
		case r.rounds != nil:
			w := f.pick(r.rounds.pin)
			for _, rs := range r.rounds.rounds {
				f.workers[w].roundQ = append(f.workers[w].roundQ, &qjob{round: rs, dur: time.Duration(len(rs.tasks)) * f.cfg.Run})
			}
		}
	}
}

// pick is the worker that takes a measurement's rounds, as the fleet's
// client picks it: the one kept for pin, else the one with the fewest
// rounds queued (the first of those), kept for pin from then on.
func (f *Fleet) pick(pin string) int {
	if w, ok := f.pins[pin]; ok {
		return w
	}
	best, load := 0, -1
	for i, w := range f.workers {
		n := len(w.roundQ)
		if w.round != nil {
			n++
		}
		if load < 0 || n < load {
			best, load = i, n
		}
	}
	f.pins[pin] = best
	return best
}

// schedule lets each worker fetch from its queues and start the job it
// fetched first, until nothing changes. A free worker fetches a build
// before a busy one does (River's producers of idle workers poll too, but
// a worker whose build slot is free fetches a build while it runs a
// round, and runs it after).
func (f *Fleet) schedule() {
	for changed := true; changed; {
		changed = false
		for _, w := range f.workers {
			if w.round == nil && len(w.roundQ) > 0 {
				w.round, w.roundQ = w.roundQ[0], w.roundQ[1:]
				f.seq++
				w.round.seq = f.seq
				changed = true
			}
		}
		for len(f.classQ) > 0 {
			w := f.buildTaker()
			if w == nil {
				break
			}
			w.build, f.classQ = f.classQ[0], f.classQ[1:]
			f.seq++
			w.build.seq = f.seq
			changed = true
		}
		now := time.Now()
		for _, w := range f.workers {
			if w.running != nil {
				continue
			}
			next := w.round
			if w.build != nil && (next == nil || w.build.seq < next.seq) {
				next = w.build
			}
			if next != nil {
				w.running, w.until = next, now.Add(next.dur)
				changed = true
			}
		}
	}
}

// buildTaker is the worker that fetches the next build: an idle one
// first, else one whose build slot is free.
func (f *Fleet) buildTaker() *worker {
	for _, w := range f.workers {
		if w.build == nil && w.running == nil && w.round == nil {
			return w
		}
	}
	for _, w := range f.workers {
		if w.build == nil {
			return w
		}
	}
	return nil
}

// nextEnd is when the first running job ends.
func (f *Fleet) nextEnd() (time.Time, bool) {
	var t time.Time
	busy := false
	for _, w := range f.workers {
		if w.running != nil && (!busy || w.until.Before(t)) {
			t, busy = w.until, true
		}
	}
	return t, busy
}

// finish ends the jobs that end at now.
func (f *Fleet) finish(now time.Time) {
	for i, w := range f.workers {
		j := w.running
		if j == nil || w.until.After(now) {
			continue
		}
		w.running = nil
		f.stats.Busy[i] += j.dur
		if j == w.build {
			w.build = nil
			f.stats.Builds++
			f.built(j.build, w.name, now.Add(-j.dur), j.dur)
		} else {
			w.round = nil
			f.stats.Rounds++
			f.stats.Runs += len(j.round.tasks)
			f.measured(j.round, w.name, now.Add(-j.dur))
		}
	}
}
