package measure

import (
	"math/rand"
	"slices"
	"testing"
)

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewSource(int64(seed))) }

// checkSchedule checks the properties Schedule promises.
func checkSchedule(t *testing.T, k, runs int, slots []Slot) {
	t.Helper()
	if len(slots) != k*runs {
		t.Fatalf("k=%d runs=%d: %d slots, want %d", k, runs, len(slots), k*runs)
	}
	first := make([]int, k)
	for r := range runs {
		round := slots[r*k : (r+1)*k]
		seen := make([]bool, k)
		for _, s := range round {
			if s.Round != r {
				t.Fatalf("k=%d runs=%d: slot %+v in round %d's place", k, runs, s, r)
			}
			if s.Commit < 0 || s.Commit >= k || seen[s.Commit] {
				t.Fatalf("k=%d runs=%d: round %d is not a permutation: %v", k, runs, r, round)
			}
			seen[s.Commit] = true
		}
		first[round[0].Commit]++
	}
	// Every complete block of k rounds is a Latin square.
	for b := 0; (b+1)*k <= runs; b++ {
		for pos := range k {
			seen := make([]bool, k)
			for r := b * k; r < (b+1)*k; r++ {
				c := slots[r*k+pos].Commit
				if seen[c] {
					t.Fatalf("k=%d runs=%d: commit %d twice at position %d in block %d", k, runs, c, pos, b)
				}
				seen[c] = true
			}
		}
	}
	if lo, hi := slices.Min(first), slices.Max(first); hi-lo > 1 {
		t.Errorf("k=%d runs=%d: first-position counts %v differ by more than one", k, runs, first)
	}
}

func TestScheduleBalance(t *testing.T) {
	for k := 1; k <= 7; k++ {
		for runs := 1; runs <= 15; runs++ {
			for seed := range uint64(5) {
				checkSchedule(t, k, runs, Schedule(k, runs, seeded(seed)))
			}
		}
	}
}

func TestScheduleTwoCommits(t *testing.T) {
	orders := map[string]bool{}
	for seed := range uint64(50) {
		slots := Schedule(2, 6, seeded(seed))
		var firstA int
		order := ""
		for r := range 6 {
			if slots[2*r].Commit == 0 {
				firstA++
			}
			order += string(rune('A' + slots[2*r].Commit))
			// Rounds come in counterbalanced pairs.
			if r%2 == 1 && slots[2*r].Commit == slots[2*r-2].Commit {
				t.Fatalf("seed %d: rounds %d and %d start with the same commit: %v", seed, r-1, r, slots)
			}
		}
		if firstA != 3 {
			t.Errorf("seed %d: A first in %d of 6 rounds, want 3", seed, firstA)
		}
		orders[order] = true
	}
	// The pairs' orientation is random: with 3 pairs there are 8 orders.
	if len(orders) != 8 {
		t.Errorf("saw %d distinct orders of first commits over 50 seeds, want all 8: %v", len(orders), orders)
	}
}

// TestScheduleNotBlocked checks that no commit's runs all come before
// another's: the schedule interleaves.
func TestScheduleNotBlocked(t *testing.T) {
	for k := 2; k <= 5; k++ {
		slots := Schedule(k, 6, seeded(1))
		last := make([]int, k)
		firstAt := make([]int, k)
		for i := range firstAt {
			firstAt[i] = -1
		}
		for i, s := range slots {
			last[s.Commit] = i
			if firstAt[s.Commit] < 0 {
				firstAt[s.Commit] = i
			}
		}
		for a := range k {
			for b := range k {
				if a != b && last[a] < firstAt[b] {
					t.Errorf("k=%d: all runs of %d come before any of %d", k, a, b)
				}
			}
		}
	}
}

// TestScheduleCarryover checks that over complete squares every commit
// directly follows every other equally often.
func TestScheduleCarryover(t *testing.T) {
	for k := 2; k <= 7; k++ {
		square := k
		if k%2 == 1 {
			square = 2 * k
		}
		runs := 2 * square
		slots := Schedule(k, runs, seeded(uint64(k)))
		count := make(map[[2]int]int)
		for r := range runs {
			for j := 1; j < k; j++ {
				count[[2]int{slots[r*k+j-1].Commit, slots[r*k+j].Commit}]++
			}
		}
		want := runs * (k - 1) / (k * (k - 1))
		for a := range k {
			for b := range k {
				if a != b && count[[2]int{a, b}] != want {
					t.Errorf("k=%d: %d directly followed by %d %d times, want %d", k, b, a, count[[2]int{a, b}], want)
				}
			}
		}
	}
}

func TestScheduleDeterministic(t *testing.T) {
	a := Schedule(4, 9, seeded(42))
	b := Schedule(4, 9, seeded(42))
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different schedules:\n%v\n%v", a, b)
	}
	differ := false
	for seed := range uint64(10) {
		if !slices.Equal(a, Schedule(4, 9, seeded(seed+100))) {
			differ = true
		}
	}
	if !differ {
		t.Errorf("ten other seeds all gave the same schedule")
	}
	// A nil rng works and still has the properties.
	checkSchedule(t, 3, 4, Schedule(3, 4, nil))
}

func TestScheduleEmpty(t *testing.T) {
	for _, c := range [][2]int{{0, 5}, {3, 0}, {-1, 5}, {3, -2}} {
		if s := Schedule(c[0], c[1], seeded(1)); s != nil {
			t.Errorf("Schedule(%d, %d) = %v, want nil", c[0], c[1], s)
		}
	}
}

func TestWarmup(t *testing.T) {
	got := Warmup(2, 2)
	want := []Slot{{0, -1}, {1, -1}, {0, -2}, {1, -2}}
	if !slices.Equal(got, want) {
		t.Errorf("Warmup(2, 2) = %v, want %v", got, want)
	}
	if Warmup(0, 3) != nil || Warmup(2, 0) != nil {
		t.Errorf("empty warm-ups not nil")
	}
}
