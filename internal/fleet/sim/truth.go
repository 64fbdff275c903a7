package sim

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
)

// Truth is what the simulated benchmark measures: a first-parent history
// of commits whose figure changes by EffectPct at one known commit.
type Truth struct {
	// Commits are the hashes in history order: Commits[0] is the good
	// end, Commits[len-1] the bad end.
	Commits []string
	// Culprit is the position in Commits of the commit that changes the
	// figure (1 or more).
	Culprit int
	// EffectPct is the change, in percent, that the culprit makes to the
	// figure (positive: slower).
	EffectPct float64
	// Base is the good end's figure; Noise the run-to-run noise and
	// Layout the spread that each build's layout adds (both lognormal
	// sigmas); Machine the spread between machines of the class.
	Base, Noise, Layout, Machine float64
	// BrokenEvery > 0 makes every commit whose position is a multiple of
	// it fail to build (never an end, the culprit or its parent).
	BrokenEvery int
	// Seed draws the noise: the same seed, the same figures.
	Seed int64

	pos map[string]int
}

// Check says what is wrong with t.
func (t *Truth) Check() error {
	switch {
	case len(t.Commits) < 3:
		return fmt.Errorf("sim: a history of %d commits: want at least 3", len(t.Commits))
	case t.Culprit < 1 || t.Culprit >= len(t.Commits):
		return fmt.Errorf("sim: culprit at position %d of %d commits: want 1 to %d", t.Culprit, len(t.Commits), len(t.Commits)-1)
	case t.Base <= 0:
		return fmt.Errorf("sim: base figure %v: want above 0", t.Base)
	case t.Noise < 0 || t.Layout < 0 || t.Machine < 0:
		return fmt.Errorf("sim: noise %v, layout %v, machine %v: none may be negative", t.Noise, t.Layout, t.Machine)
	}
	return nil
}

// Position is commit's place in the history (-1 when it is not in it).
func (t *Truth) Position(commit string) int {
	if t.pos == nil {
		t.pos = make(map[string]int, len(t.Commits))
		for i, c := range t.Commits {
			t.pos[c] = i
		}
	}
	if p, ok := t.pos[commit]; ok {
		return p
	}
	return -1
}

// Broken reports whether commit fails to build.
func (t *Truth) Broken(commit string) bool {
	p := t.Position(commit)
	if t.BrokenEvery <= 0 || p <= 0 || p >= len(t.Commits)-1 || p == t.Culprit || p == t.Culprit-1 {
		return false
	}
	return p%t.BrokenEvery == 0
}

// Figure is the value of run index of commit built as variant (a
// variant's ID, "" the plain build), taken on machine: the true level of
// the commit, its build's layout, the machine's speed and the run's noise,
// each drawn from the seed and what it depends on only, so that the
// figures do not depend on the order the runs are taken in.
func (t *Truth) Figure(commit, variant string, index int, machine string) float64 {
	level := math.Log(t.Base)
	if t.Position(commit) >= t.Culprit {
		level += math.Log1p(t.EffectPct / 100)
	}
	level += t.Layout * t.normal("layout", commit, variant)
	level += t.Machine * t.normal("machine", machine)
	level += t.Noise * t.normal("run", commit, variant, fmt.Sprint(index), machine)
	return math.Exp(level)
}

// normal is a standard normal draw named by parts.
func (t *Truth) normal(parts ...string) float64 {
	u1, u2 := t.uniform(append(parts, "1")...), t.uniform(append(parts, "2")...)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// uniform is a draw in (0, 1) named by parts.
func (t *Truth) uniform(parts ...string) float64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(t.Seed))
	h.Write(b[:])
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	// FNV's low bits mix poorly: finish with splitmix64.
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return (float64(x>>11) + 0.5) / (1 << 53)
}
