// What a Measurer takes and returns: requests, batches and the stored samples of a commit.

package bisect

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
)

// Measurer takes runs and returns what is stored. Implementations take
// only the runs their store lacks, interleaving the runs of the requests of
// one call (round r runs every request that still needs a run once, in a
// random order), so that runs of one call with the same number of new runs
// pair up round by round.
type Measurer interface {
	// Measure makes sure each request's commit has at least Runs runs
	// (per layout) stored, and returns, in request order, everything
	// stored for each.
	Measure(ctx context.Context, reqs []Request) (*Batch, error)
	// Layouts is the number of layouts each commit is measured under: 1,
	// or the size of the layout sweep.
	Layouts() int
}

// PinningMeasurer is a Measurer that can keep calls on one machine (a
// fleet's): MeasureOn measures on the machine it keeps for key, the one
// that took key's earlier calls while it lives. The k-ary search keeps
// each of its candidate slots on one machine, whose runs of the ends then
// serve every candidate it measures.
type PinningMeasurer interface {
	Measurer
	MeasureOn(ctx context.Context, key string, reqs []Request) (*Batch, error)
}

// Prefetcher is implemented by measurers that can build commits ahead, in
// the background, while runs are being taken ([SpeculateBuild]).
type Prefetcher interface {
	Prefetch(ctx context.Context, commits []gitrev.Commit)
}

// Request asks for Runs runs per layout of one commit.
type Request struct {
	Commit gitrev.Commit
	// Runs is how many runs (per layout) to have stored, run numbers
	// From+1..Runs; 0 takes none (only what is stored is read).
	Runs int
	// From leaves run numbers up to From alone: the check asks for fresh
	// runs after the highest one stored.
	From int
}

// Batch is what one Measure call found and did.
type Batch struct {
	Samples []Samples // one per request
	Taken   int       // runs taken by this call
	Built   int       // builds made (not found in the build cache) since the last call, speculative ones included
	Better  metric.Better
}

// Samples is what is stored for one commit.
type Samples struct {
	// Layouts[k] holds the runs under layout k, in run order (one layout
	// unless the measurer sweeps layouts).
	Layouts [][]Value
	// BuildErr is set when the commit (under some layout) does not build.
	BuildErr error
}

// Value is one stored run's figure for the bisected metric.
type Value struct {
	Index  int     // run number, from 1
	OK     bool    // false for failed runs (crash, timeout, missing metric)
	Value  float64 // the metric (the median of the run's values); 0 when !OK
	Reason string  // why it failed
	// Machine is the machine that took the run ("" when unknown).
	Machine string
}

// maxIndex is the highest run number stored under any layout.
func (s Samples) maxIndex() int {
	n := 0
	for _, l := range s.Layouts {
		for _, v := range l {
			n = max(n, v.Index)
		}
	}
	return n
}

// runs is the number of runs stored per layout (the fewest of any layout).
func (s Samples) runs() int {
	if len(s.Layouts) == 0 {
		return 0
	}
	n := math.MaxInt
	for _, l := range s.Layouts {
		n = min(n, len(l))
	}
	return n
}

// replicates returns one figure per run number: the run's value, or with
// several layouts the geometric mean over the layouts of the runs with that
// number (run numbers where every layout has an OK run). Averaged over a
// fixed set of layouts that spans the alignment cycle, a pure alignment
// shift only permutes the layouts' figures and leaves the mean alone, while
// a real change moves it.
func (s Samples) replicates() []float64 {
	if len(s.Layouts) == 1 {
		var out []float64
		for _, r := range s.Layouts[0] {
			if r.OK {
				out = append(out, r.Value)
			}
		}
		return out
	}
	return s.replicatesAfter(0)
}

// replicatesAfter returns the replicates of the runs numbered above from,
// keyed by round (run number - from), in round order.
func (s Samples) replicatesAfter(from int) []float64 {
	byRound := map[int][]float64{}
	maxRound := 0
	for _, l := range s.Layouts {
		for _, r := range l {
			if r.OK && r.Index > from && r.Value > 0 {
				byRound[r.Index-from] = append(byRound[r.Index-from], math.Log(r.Value))
				maxRound = max(maxRound, r.Index-from)
			}
		}
	}
	var out []float64
	for round := 1; round <= maxRound; round++ {
		if xs := byRound[round]; len(xs) == len(s.Layouts) {
			out = append(out, math.Exp(mean(xs)))
		}
	}
	return out
}

// failure says why no run is usable: "" when some run is OK or none ran.
func (s Samples) failure() string {
	total, reasons := 0, map[string]int{}
	for _, l := range s.Layouts {
		for _, r := range l {
			if r.OK {
				return ""
			}
			total++
			reasons[r.Reason]++
		}
	}
	if total == 0 {
		return ""
	}
	var rs []string
	for r := range reasons {
		rs = append(rs, r)
	}
	sort.Strings(rs)
	return fmt.Sprintf("all %d runs failed: %s", total, strings.Join(rs, "; "))
}
