package triage

import (
	"slices"
	"testing"

	"github.com/perfbot/perfbot/internal/compare"
)

// TestPairsOneSession: runs pair only when they share the whole pair key:
// a run number taken in another session, on another machine or under
// another layout is not a pair.
func TestPairsOneSession(t *testing.T) {
	key := func(session string, round int) compare.Pair {
		return compare.Pair{Machine: "m1", Session: session, Round: round}
	}
	a := runVals{key("s1", 1): 1, key("s1", 2): 2, key("s1", 3): 3, key("s2", 4): 4}
	b := runVals{key("s1", 1): 10, key("s1", 2): 20, key("s3", 3): 30, key("s2", 4): 40}
	other := key("s1", 2)
	other.Machine = "m2"
	b[other] = 99
	layout1 := key("s1", 1)
	layout1.Layout = 1
	b[layout1] = 77
	x, y := pairs(a, b)
	if !slices.Equal(x, []float64{1, 2, 4}) || !slices.Equal(y, []float64{10, 20, 40}) {
		t.Errorf("pairs = %v, %v; want runs 1, 2 (session s1) and 4 (session s2): run 3 was taken in two sessions", x, y)
	}
	if got := upTo(b, 2); len(got) != 4 {
		t.Errorf("upTo(b, 2) = %v: want the four runs numbered 1 or 2", got)
	}
	if got := firstReason(runFails{key("s2", 5): "late", key("s1", 2): "early"}); got != "early" {
		t.Errorf("firstReason = %q, want the lowest run number's", got)
	}
}
