package watch

import (
	"math"

	"github.com/perfbot/perfbot/internal/history"
)

// changes returns the indices k of the history's points that start a
// change (between point k-1 and k), oldest first.
//
// A step is a change when its own within-session comparison says so: the
// commit was measured in the same interleaved rounds as the commit tested
// before it, and the paired test is significant at the job's alpha with a
// change of at least the job's effect. This is the direct test of each new
// head, free of the machine's drift between sessions.
func changes(s *history.Series, jc JobConfig) []int {
	var out []int
	for k := 1; k < len(s.Points); k++ {
		p := s.Points[k]
		if p.NewChain || p.Ref != s.Points[k-1].Commit.Hash {
			continue // not measured against its predecessor in the history
		}
		if p.P > 0 && p.P < jc.Alpha && math.Abs(p.Step) >= jc.Effect {
			out = append(out, k)
		}
	}
	return out
}
