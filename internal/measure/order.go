package measure

import (
	"math/rand"
	"slices"
)

// Order plans the order of one measurement's runs: given how many runs each
// target still needs, it returns the sequence of target indices in which to
// take them (each index i appears counts[i] times). The k-th appearance of a
// target takes its k-th missing run.
type Order func(counts []int, rng *rand.Rand) []int

// Balanced is the default [Order]: when every target needs the same number
// of runs, whole rounds in a Williams design ([Schedule]); otherwise
// [Spread].
func Balanced(counts []int, rng *rand.Rand) []int {
	n := 0
	for _, c := range counts {
		if c > 0 {
			n = c
			break
		}
	}
	equal := n > 0
	for _, c := range counts {
		equal = equal && c == n
	}
	if !equal {
		return Spread(counts, rng)
	}
	out := make([]int, 0, n*len(counts))
	for _, s := range Schedule(len(counts), n, rng) {
		out = append(out, s.Commit)
	}
	return out
}

// Spread orders runs of targets that may need different numbers of runs:
// counts[i] runs of target i, each target's runs spread evenly over the
// whole sequence (stratified at random: its j-th run falls in the j-th of
// counts[i] equal parts). Targets with the same count take their j-th runs
// side by side, as rounds; a target with one run lands in the middle of the
// others'. Slow drift and bursts of load thus hit every target alike.
func Spread(counts []int, rng *rand.Rand) []int {
	type slot struct {
		target int
		key    float64
	}
	var slots []slot
	for i, k := range counts {
		for j := range k {
			slots = append(slots, slot{i, (float64(j) + 0.25 + 0.5*rng.Float64()) / float64(k)})
		}
	}
	slices.SortStableFunc(slots, func(a, b slot) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	out := make([]int, len(slots))
	for i, s := range slots {
		out[i] = s.target
	}
	return out
}

// Slot is one run in a schedule: which commit (an index into the caller's
// list) and which round. Round r of every commit is meant to be compared
// with round r of the others. Warm-up slots have negative rounds.
type Slot struct {
	Commit int
	Round  int
}

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

// Warmup returns n warm-up rounds over commits commits, alternating
// (A B A B ...), with negative rounds -1, -2, ... -n, never the round of
// a measured run. Run them before the measured schedule and do not record
// them.
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
