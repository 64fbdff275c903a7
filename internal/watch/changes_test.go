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
	if got := changes(chainSeries(80, 0.01, map[int]float64{40: 12}, 0.001, 1), jc); !slices.Equal(got, []int{40}) {
		t.Errorf("strong step: changes %v, want [40]", got)
	}
	if got := changes(chainSeries(80, 0.01, map[int]float64{40: 12}, 0.2, 2), jc); !slices.Equal(got, []int{40}) {
		t.Errorf("step with a weak own test: changes %v, want [40] from the chain detector", got)
	}
	for seed := int64(3); seed < 13; seed++ {
		if got := changes(chainSeries(80, 0.01, nil, 0, seed), jc); len(got) != 0 {
			t.Errorf("noise only (seed %d): changes %v", seed, got)
		}
	}
}
