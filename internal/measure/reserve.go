package measure

import (
	"context"
	"fmt"

	"github.com/perfbot/perfbot/internal/store"
)

// A Reserver is a [RoundExecutor] shared by processes that measure into
// one store at once (a fleet's server runs many comparisons and
// bisections, and a resumed one runs beside the rounds its crashed
// predecessor queued): it claims run numbers for a measurement's session,
// atomically for every process, so that two measurements never take the
// same run. [Measure] plans through it: with Options.WholeRounds it takes
// the next run numbers it can claim for every target of a round, the
// round's claims all or none (a round of which another session claimed
// any run is skipped, and none of its runs is kept: a run number held by
// a session that never takes it would be a hole for good); otherwise it
// claims the run numbers the targets ask for and leaves those another
// session claimed and has not stored to that session (they are stored by
// it, or given up when its rounds are withdrawn).
//
// Claims are kept: a run number claimed once is its session's, except
// that a stored failed run may be taken again by the measurement that
// names the session that stored it (Claim.Retake).
type Reserver interface {
	RoundExecutor
	// Reserve claims each group of claims for session, all of the group
	// or none of it, and reports, in order, which groups are the
	// session's now.
	Reserve(ctx context.Context, session string, groups [][]Claim) ([]bool, error)
}

// Claim is one run number a measurement wants to take.
type Claim struct {
	Key store.RunKey
	// Retake is the session of the stored (failed) run at Key that the
	// measurement takes again, "" when nothing is stored there: a claim
	// held by that session passes to the new one.
	Retake string
}

// reserver is the measurement's Reserver, or nil.
func (m *measurement) reserver() Reserver {
	r, _ := m.exec.(Reserver)
	return r
}

// key is the run key of run number index of target i.
func (m *measurement) key(i, index int) store.RunKey {
	t := m.out.Targets[i].Target
	return store.RunKey{Job: m.j.Key(), Commit: t.Commit.Hash, Variant: VariantID(t.Variant), Index: index}
}

// roundNumbers returns need run numbers above s.maxIndex for new whole
// rounds of targets active, each claimed for every one of them.
func (m *measurement) roundNumbers(ctx context.Context, s *inStore, active []int, need int) ([]int, error) {
	rv := m.reserver()
	var idx []int
	for next := s.maxIndex + 1; len(idx) < need; {
		var cands []int
		for len(cands) < need-len(idx) {
			cands = append(cands, next)
			next++
		}
		if rv == nil {
			idx = append(idx, cands...)
			break
		}
		rounds := make([][]Claim, len(cands)) // each round's claims, all or none
		for k, r := range cands {
			for _, i := range active {
				rounds[k] = append(rounds[k], Claim{Key: m.key(i, r)})
			}
		}
		ok, err := rv.Reserve(ctx, m.out.Session, rounds)
		if err != nil {
			return nil, fmt.Errorf("claiming run numbers: %w", err)
		}
		for k, r := range cands {
			if ok[k] {
				idx = append(idx, r)
			}
		}
	}
	return idx, nil
}

// claim keeps, of the run numbers missing[k] of targets active[k], those
// this measurement's session could claim.
func (m *measurement) claim(ctx context.Context, s *inStore, active []int, missing [][]int) ([]int, [][]int, error) {
	rv := m.reserver()
	if rv == nil || len(active) == 0 {
		return active, missing, nil
	}
	var claims [][]Claim // each run number on its own
	for k, i := range active {
		for _, r := range missing[k] {
			c := Claim{Key: m.key(i, r)}
			if rec, ok := s.byTarget[i][r]; ok {
				c.Retake = rec.Session
			}
			claims = append(claims, []Claim{c})
		}
	}
	ok, err := rv.Reserve(ctx, m.out.Session, claims)
	if err != nil {
		return nil, nil, fmt.Errorf("claiming run numbers: %w", err)
	}
	var act []int
	var miss [][]int
	n := 0
	for k, i := range active {
		var idx []int
		for _, r := range missing[k] {
			if ok[n] {
				idx = append(idx, r)
			}
			n++
		}
		if len(idx) > 0 {
			act = append(act, i)
			miss = append(miss, idx)
		}
	}
	return act, miss, nil
}
