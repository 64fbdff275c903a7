package testutil

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"strconv"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// HistorySpec describes a synthetic history for SyntheticHistory: what
// perfbot watch would have stored after testing Commits commits of a branch,
// PerCycle new ones per cycle, each cycle measuring them in Rounds
// interleaved rounds together with the newest commit tested before (its
// reference), so that every step is a comparison within one session.
type HistorySpec struct {
	Job      string // job key
	Branch   string // default "main"
	Commits  int
	PerCycle int // default 20
	Rounds   int // default 3
	// Level is the true median of commit i's metric; the machine's drift
	// between sessions (up to x1.3 here) and 1 % noise come on top.
	Level func(i int) float64
	// Metric is the metric's name (default "work_ms", lower is better).
	Metric string
	// Layout, when set, is the layout summary stored with commit i.
	Layout func(i int) json.RawMessage
	Seed   int64
	// Hashes are the commits' hashes (a real repository's first-parent
	// list, oldest first); nil: made up.
	Hashes []string
}

// SyntheticHistory stores the history HistorySpec describes in st, with
// runs as measure stores them (sessions, rounds, one value per run), the
// job's record, and tested records as watch writes them; it returns the
// commits' hashes, oldest first (made up: there is no repository).
// Storing takes about a millisecond per run (each is committed and
// synced).
func SyntheticHistory(tb testing.TB, st *store.Store, spec HistorySpec) []string {
	tb.Helper()
	ctx := context.Background()
	if spec.Branch == "" {
		spec.Branch = "main"
	}
	if spec.PerCycle == 0 {
		spec.PerCycle = 20
	}
	if spec.Rounds == 0 {
		spec.Rounds = 3
	}
	if spec.Metric == "" {
		spec.Metric = "work_ms"
	}
	rng := rand.New(rand.NewSource(spec.Seed))
	if err := st.PutJob(ctx, spec.Job, "synthetic", []byte(`{"Name":"synthetic"}`)); err != nil {
		tb.Fatal(err)
	}
	hashes := make([]string, spec.Commits)
	for i := range hashes {
		if i < len(spec.Hashes) {
			hashes[i] = spec.Hashes[i]
			continue
		}
		sum := sha1.Sum([]byte(fmt.Sprintf("%s %d %d", spec.Job, spec.Seed, i)))
		hashes[i] = hex.EncodeToString(sum[:])
	}
	next := map[string]int{} // the next run number of each commit
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for start, cycle := 0, 1; start < spec.Commits; start, cycle = start+spec.PerCycle, cycle+1 {
		session := "s" + strconv.Itoa(cycle)
		drift := 1 + 0.3*rng.Float64()
		batch := []int{}
		if start > 0 {
			batch = append(batch, start-1) // the reference, measured again
		}
		for i := start; i < min(start+spec.PerCycle, spec.Commits); i++ {
			batch = append(batch, i)
		}
		// Whole rounds: every commit of the batch gets the same run numbers.
		first := 0
		for _, i := range batch {
			first = max(first, next[hashes[i]]+1)
		}
		var rounds []int
		for r := range spec.Rounds {
			rounds = append(rounds, first+r)
			for _, i := range batch {
				v := spec.Level(i) * drift * (1 + 0.01*rng.NormFloat64())
				// The job's metric, then the builtin figures measure
				// stores with every run.
				u := metric.Usage{Wall: time.Duration(v * float64(time.Millisecond)), User: time.Duration(v * float64(time.Millisecond)), MaxRSSKiB: 2048}
				rec := &store.RunRecord{
					RunKey:  store.RunKey{Job: spec.Job, Commit: hashes[i], Index: first + r},
					Status:  store.RunOK,
					CPU:     -1,
					Started: when,
					Usage:   u,
					Session: session,
					Values:  append([]metric.Value{{Name: spec.Metric, Unit: "ms", Better: metric.LowerIsBetter, Value: v}}, metric.Builtins(u)...),
				}
				if err := st.PutRun(ctx, rec); err != nil {
					tb.Fatal(err)
				}
				next[hashes[i]] = first + r
			}
		}
		ref := ""
		if start > 0 {
			ref = hashes[start-1]
		}
		for _, i := range batch {
			if i == start-1 {
				continue
			}
			// Recorded one after the other, as watch records them.
			t := &store.Tested{Job: spec.Job, Commit: hashes[i], Branch: spec.Branch, Ref: ref, Session: session,
				Rounds: rounds, Cycle: int64(cycle), When: when.Add(time.Duration(i-start) * time.Second)}
			if spec.Layout != nil {
				t.Layout = spec.Layout(i)
			}
			if err := st.PutTested(ctx, t); err != nil {
				tb.Fatal(err)
			}
		}
		when = when.Add(10 * time.Minute)
	}
	return hashes
}
