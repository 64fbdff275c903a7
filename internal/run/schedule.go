package run

import "math/rand"

// Slot is one run in a schedule: which commit (an index into the caller's
// list) and which round. Round r of every commit is meant to be compared
// with round r of the others (it is store.RunKey.Index-1). Warm-up slots
// have negative rounds.
type Slot struct {
	Commit int
	Round  int
}

// IsWarmup reports whether the slot is a warm-up run (see Warmup).
func (s Slot) IsWarmup() bool { return s.Round < 0 }

// Schedule returns the order in which to take runs runs of each of commits
// commits: runs rounds, round r before round r+1, each round running every
// commit once. It never runs all of one commit and then all of another, so
// slow drift of the machine's speed hits every commit alike.
//
// The order inside a round comes from a Williams design, a Latin square
// balanced for first-order carry-over, with randomly relabelled commits and
// rows in random order:
//   - each block of commits consecutive rounds (rounds 0..k-1, k..2k-1, ...)
//     puts every commit in every position once, so over the schedule each
//     commit goes first in runs/commits rounds, give or take one; for two
//     commits the rounds come in counterbalanced pairs, A B then B A or
//     B A then A B;
//   - over each complete square (commits rounds for an even number of
//     commits, twice that for an odd number) every commit directly follows
//     every other the same number of times.
//
// The result depends only on the arguments and the state of rng; a nil rng
// uses a randomly seeded one. It is nil when commits or runs is not
// positive.
func Schedule(commits, runs int, rng *rand.Rand) []Slot {
	if commits <= 0 || runs <= 0 {
		return nil
	}
	if rng == nil {
		rng = rand.New(rand.NewSource(rand.Int63()))
	}
	k := commits
	base := williams(k)
	label := make([]int, k)
	rows := make([]int, k)
	slots := make([]Slot, 0, k*runs)
	for block := 0; block*k < runs; block++ {
		// A square is base (even k) or base and its mirror image (odd k);
		// a fresh labelling per square keeps its balance.
		mirror := k%2 == 1 && block%2 == 1
		if !mirror {
			for i := range label {
				label[i] = i
			}
			rng.Shuffle(k, func(i, j int) { label[i], label[j] = label[j], label[i] })
		}
		for i := range rows {
			rows[i] = i
		}
		rng.Shuffle(k, func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		for i := 0; i < k && block*k+i < runs; i++ {
			round := block*k + i
			row := base[rows[i]]
			for j := range k {
				c := row[j]
				if mirror {
					c = row[k-1-j]
				}
				slots = append(slots, Slot{Commit: label[c], Round: round})
			}
		}
	}
	return slots
}

// williams returns the k rows of a Williams square of order k: row r is
// r, r+1, r-1, r+2, r-2, ... (mod k). For even k every ordered pair of
// symbols is adjacent in exactly one row; for odd k the rows together with
// their mirror images make every ordered pair adjacent exactly twice.
func williams(k int) [][]int {
	first := make([]int, k)
	lo, hi := 1, k-1
	for j := 1; j < k; j++ {
		if j%2 == 1 {
			first[j] = lo
			lo++
		} else {
			first[j] = hi
			hi--
		}
	}
	rows := make([][]int, k)
	for r := range k {
		rows[r] = make([]int, k)
		for j := range k {
			rows[r][j] = (first[j] + r) % k
		}
	}
	return rows
}

// ScheduleFrom is Schedule for resuming: it drops the slots for which done
// reports true (nil done drops nothing) and keeps the order of the rest, so
// the remaining runs stay interleaved round by round and unfinished earlier
// rounds come first. Given an rng in the same state as for the original
// plan (the same seed), the result is exactly the unfinished part of that
// plan; with another state the unfinished rounds are ordered afresh, with
// the same properties.
func ScheduleFrom(commits, runs int, rng *rand.Rand, done func(Slot) bool) []Slot {
	all := Schedule(commits, runs, rng)
	if done == nil {
		return all
	}
	rest := all[:0]
	for _, s := range all {
		if !done(s) {
			rest = append(rest, s)
		}
	}
	return rest
}

// Warmup returns n warm-up rounds over commits commits, alternating
// (A B A B ...), with rounds -1, -2, ... -n so that Slot.IsWarmup reports
// them. Run them before the measured schedule and do not record them.
func Warmup(commits, n int) []Slot {
	if commits <= 0 || n <= 0 {
		return nil
	}
	slots := make([]Slot, 0, commits*n)
	for r := range n {
		for c := range commits {
			slots = append(slots, Slot{Commit: c, Round: -1 - r})
		}
	}
	return slots
}
