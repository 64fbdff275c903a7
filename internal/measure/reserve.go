package measure

import (
	"context"
	"fmt"
	"slices"

	"github.com/perfbot/perfbot/internal/store"
)

// A Reserver is a [RoundExecutor] shared by processes that measure into
// one store at once (a fleet's server runs many comparisons and
// bisections, and a resumed one runs beside the rounds its crashed
// predecessor queued): it claims run numbers for a measurement's session,
// atomically for every process, so that two measurements never take the
// same run. [Measure] plans through it: with Options.WholeRounds it takes
// the next run numbers it can claim for every target of a round (a round
// of numbers another session claimed is skipped, not shared); otherwise it
// claims the run numbers the targets ask for and leaves those another
// session claimed and has not stored to that session (they are stored by
// it, or given up when its rounds are withdrawn).
//
// Claims are kept: a run number claimed once is its session's, except
// that a stored failed run may be taken again by the measurement that
// names the session that stored it (Claim.Retake).
type Reserver interface {
	RoundExecutor
	// Reserve claims each of claims for session and reports, in order,
	// which are the session's now.
	Reserve(ctx context.Context, session string, claims []Claim) ([]bool, error)
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
func (m *measurement) roundNumbers(ctx context.Context, s *stored, active []int, need int) ([]int, error) {
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
		var claims []Claim
		for _, r := range cands {
			for _, i := range active {
				claims = append(claims, Claim{Key: m.key(i, r)})
			}
		}
		ok, err := rv.Reserve(ctx, m.out.Session, claims)
		if err != nil {
			return nil, fmt.Errorf("claiming run numbers: %w", err)
		}
		for k, r := range cands {
			if !slices.Contains(ok[k*len(active):(k+1)*len(active)], false) {
				idx = append(idx, r)
			}
		}
	}
	return idx, nil
}

// claim keeps, of the run numbers missing[k] of targets active[k], those
// this measurement's session could claim.
func (m *measurement) claim(ctx context.Context, s *stored, active []int, missing [][]int) ([]int, [][]int, error) {
	rv := m.reserver()
	if rv == nil || len(active) == 0 {
		return active, missing, nil
	}
	var claims []Claim
	for k, i := range active {
		for _, r := range missing[k] {
			c := Claim{Key: m.key(i, r)}
			if rec, ok := s.byTarget[i][r]; ok {
				c.Retake = rec.Session
			}
			claims = append(claims, c)
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
