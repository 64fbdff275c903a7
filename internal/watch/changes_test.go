package watch

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
)

// chainSeries is a history of n points whose steps are noise of cv (as a
// fraction), with the given steps (percent) at the given points; every
// step's own p-value is pStep.
func chainSeries(n int, cv float64, steps map[int]float64, pStep float64, seed int64) *history.Series {
	rng := rand.New(rand.NewSource(seed))
	s := &history.Series{}
	level := 1.0
	for i := range n {
		p := history.Point{Commit: gitrev.Commit{Hash: fmt.Sprintf("c%03d", i)}, Index: i}
		if i > 0 {
			step := 100*cv*rng.NormFloat64() + steps[i]
			p.Ref, p.Step, p.Lo, p.Hi, p.P = s.Points[i-1].Commit.Hash, step, step-2*100*cv, step+2*100*cv, 0.5
			if _, planted := steps[i]; planted {
				p.P = pStep
			}
			level *= 1 + step/100
		}
		p.Level, p.Median = level, level
		s.Points = append(s.Points, p)
	}
	return s
}

// TestChanges: both detectors of changes on histories with known truth: a
// planted step whose own paired test is strong is found by the direct
// test; one whose own test missed alpha (an underpowered session) is found
// by the chain detector when it stands out of the history's noise; noise
// alone makes no change.
func TestChanges(t *testing.T) {
	jc := JobConfig{Alpha: 0.01, Effect: 5}
	if got := changes(chainSeries(80, 0.01, map[int]float64{40: 12}, 0.001, 1), jc); !slices.Equal(got, []span{{39, 40}}) {
		t.Errorf("strong step: changes %v, want [40]", got)
	}
	if got := changes(chainSeries(80, 0.01, map[int]float64{40: 12}, 0.2, 2), jc); !slices.Equal(got, []span{{39, 40}}) {
		t.Errorf("step with a weak own test: changes %v, want [40] from the chain detector", got)
	}
	for seed := int64(3); seed < 13; seed++ {
		if got := changes(chainSeries(80, 0.01, nil, 0, seed), jc); len(got) != 0 {
			t.Errorf("noise only (seed %d): changes %v", seed, got)
		}
	}
}

// TestAnchorChanges: E-divisive over the ratios to an anchor finds a
// level change that the chain cannot (every step's own test is weak and
// its noise as large as the change), at its point; noise alone makes no
// change; without anchor: true the ratios are not looked at.
func TestAnchorChanges(t *testing.T) {
	withRatios := func(s *history.Series, shiftAt int, seed uint64) *history.Series {
		rng := rand.New(rand.NewSource(int64(seed)))
		for k := range s.Points {
			level := 1.0
			if shiftAt > 0 && k >= shiftAt {
				level = 1.08
			}
			r := level * (1 + 0.01*rng.NormFloat64())
			s.Points[k].Ratio, s.Points[k].RatioLo, s.Points[k].RatioHi = r, r*0.97, r*1.03
		}
		return s
	}
	jc := JobConfig{Alpha: 0.01, Effect: 5, Anchor: true}
	// The chain's steps: noise of 4 %, no step planted, weak own tests.
	s := withRatios(chainSeries(60, 0.04, nil, 0.3, 21), 30, 1)
	if got := anchorChanges(s, jc); !slices.Equal(got, []span{{29, 30}}) {
		t.Errorf("an 8 %% level change in the ratios: anchorChanges %v, want [{29 30}]", got)
	}
	if got := changes(s, jc); !slices.Contains(got, span{29, 30}) {
		t.Errorf("changes with anchor: true = %v, want 30 among them", got)
	}
	jc.Anchor = false
	if got := changes(s, jc); slices.ContainsFunc(got, func(sp span) bool { return sp.To == 30 }) {
		t.Errorf("changes without anchor: true = %v: the chain cannot see this change", got)
	}
	jc.Anchor = true
	for seed := uint64(2); seed < 12; seed++ {
		if got := anchorChanges(withRatios(chainSeries(60, 0.04, nil, 0.3, int64(seed)), 0, seed), jc); len(got) != 0 {
			t.Errorf("ratios of noise only (seed %d): changes %v", seed, got)
		}
	}
	// Points whose session did not measure the anchor are left out, and
	// the change spans them: it may be at any of them (here at 28), so it
	// is bisected from the last point with a ratio before them.
	s = withRatios(chainSeries(60, 0.04, nil, 0.3, 21), 28, 1)
	for k := 25; k < 30; k++ {
		s.Points[k].Ratio = 0
	}
	if got := anchorChanges(s, jc); !slices.Equal(got, []span{{24, 30}}) {
		t.Errorf("with points 25-29 unanchored: anchorChanges %v, want [{24 30}]", got)
	}
	if got := changes(s, jc); !slices.Contains(got, span{24, 30}) {
		t.Errorf("with points 25-29 unanchored: changes %v, want {24 30} among them", got)
	}
}
