package watch

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// TestStepTurnedPair: a new history of two commits (the start commit and
// the next one, tested together: a cycle's 8 whole rounds in one session,
// in a real store) where the second is 4x slower; in one round the
// machine's load slowed the fast commit's run past the slow one's. The
// direct test still finds the step: 8 pairs at p < 0.01 need every pair
// to agree (one turned pair gives the signed-rank test p = 0.0156), and a
// history of two points has no chain or anchor series to find it in, so
// Welch's t-test of the logs of the same runs decides (the slowed run
// passes every run of the other commit, so the rank-sum test of the 16
// runs, p = 0.0104, would miss it too). The same rounds without the
// slowdown (the same disturbed run) make no change.
func TestStepTurnedPair(t *testing.T) {
	jc := JobConfig{Alpha: DefaultAlpha, Effect: DefaultEffect}
	for _, tc := range []struct {
		name  string
		ratio float64
		want  int // changes found
	}{{"4x", 4, 1}, {"2x", 2, 1}, {"unchanged", 1, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st, err := store.Open(filepath.Join(t.TempDir(), ".perfbot"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			rng := rand.New(rand.NewPCG(7, 8))
			const session = "cycle-1"
			var rounds []int
			for r := 1; r <= 8; r++ {
				rounds = append(rounds, r)
				fast := 10 * math.Exp(0.02*rng.NormFloat64())
				slow := 10 * tc.ratio * math.Exp(0.02*rng.NormFloat64())
				if r == 5 {
					fast = slow * 1.05 // the load's doing: just past its pair
				}
				for c, v := range map[string]float64{"start": fast, "next": slow} {
					rec := &store.RunRecord{RunKey: store.RunKey{Job: "job", Commit: c, Index: r}, Status: store.RunOK, Session: session, Machine: "m",
						Values: []metric.Value{{Name: "work_ms", Unit: "ms", Better: metric.LowerIsBetter, Value: v}}}
					if err := st.PutRun(ctx, rec); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, c := range []string{"start", "next"} {
				if err := st.PutTested(ctx, &store.Tested{Job: "job", Commit: c, Branch: "main", Session: session, Rounds: rounds}); err != nil {
					t.Fatal(err)
				}
			}
			list := []gitrev.Commit{{Hash: "start"}, {Hash: "next"}}
			s, err := history.Build(ctx, st, "job", "", "work_ms", list, jc.Alpha)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Points) != 2 || s.Points[1].Ref != "start" {
				t.Fatalf("points %v, want start and next measured against it", s.Points)
			}
			p := s.Points[1]
			got := changes(s, jc)
			t.Logf("step %+.1f%%, paired p %.4g, t-test p %.4g: changes %v", p.Step, p.P, p.TP, got)
			if len(got) != tc.want {
				t.Fatalf("step %+.1f%%, paired p %.4g, t-test p %.4g: changes %v, want %d", p.Step, p.P, p.TP, got, tc.want)
			}
			if tc.want == 1 && (got[0] != span{0, 1} || p.P < jc.Alpha) {
				t.Errorf("changes %v (paired p %.4g), want the step 0..1 with the paired test missing alpha (the case tested)", got, p.P)
			}
		})
	}
}
