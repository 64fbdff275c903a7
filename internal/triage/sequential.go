// The group-sequential plan of the paired experiments' looks.

package triage

import (
	"fmt"
	"sync"

	"github.com/perfbot/perfbot/internal/stats"
)

// seqDesign says how the paired experiments spend their error over looks.
type seqDesign struct {
	// finer adds looks between the doubling ones (10, 20, 30, 40 instead
	// of 10, 20, 40).
	finer bool
	// finest adds a look between the first two as well (10, 15, 20, ...).
	finest bool
	// spend uses a Lan-DeMets spending function; without it every look
	// tests at Config.Alpha.
	spend    bool
	spending stats.Spending
}

// design is the plan the engine uses: the old doubling schedule's overall
// error spent by the Pocock-type function over looks at 10, 20, 30 and 40
// runs (the tests compare others: PERFBOT_TRIAGE_DESIGN).
var design = seqDesign{finer: true, spend: true, spending: stats.PocockSpending}

// plan returns the looks (runs per build) and each look's two-sided
// nominal level. Config.Alpha is the level of each look of the doubling
// schedule 10, 20, 40 (Pinpoint's); a spending design keeps that
// schedule's overall error (stats.SequentialError: the chance that any
// look answers "different" for identical builds) and spends it over its
// own looks, so its error is no larger.
func (e *engine) plan() stats.SequentialPlan {
	if e.seq != nil {
		return *e.seq
	}
	key := fmt.Sprintf("%v/%v/%v", e.decideOptions().Schedule(), e.opt.Alpha, e.design)
	if p, ok := plans.Load(key); ok {
		e.seq = p.(*stats.SequentialPlan)
		return *e.seq
	}
	base := e.decideOptions().Schedule()
	levels := make([]float64, len(base))
	for i := range levels {
		levels[i] = e.opt.Alpha
	}
	p := stats.SequentialPlan{Looks: base, Nominal: levels, Alpha: stats.SequentialError(base, levels)}
	if e.design.spend {
		looks := base
		if e.design.finer {
			looks = finerLooks(base, 2)
		}
		if e.design.finest {
			looks = finerLooks(base, 1)
		}
		p = stats.PlanSequential(looks, p.Alpha, e.design.spending)
	}
	e.seq = &p
	plans.Store(key, e.seq)
	return p
}

// plans caches the plans by schedule, level and design: computing one
// integrates the statistic's density numerically.
var plans sync.Map

// finerLooks adds a look halfway between the doubling looks from the one
// at index from on (from 2: 10, 20, 30, 40, 60, 80, ...).
func finerLooks(s []int, from int) []int {
	var out []int
	for i, n := range s {
		if i >= from && n > s[i-1]+1 {
			out = append(out, (s[i-1]+n)/2)
		}
		out = append(out, n)
	}
	return out
}

// nominal is the two-sided level of look k (0-based).
func (e *engine) nominal(k int) float64 { return e.plan().Nominal[k] }
