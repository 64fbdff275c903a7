package gate

import (
	"context"
	"math"
	"os"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// TestQualificationQuoted: the newest qualification of this host for the
// job is quoted, unless it was of another machine under the same name.
func TestQualificationQuoted(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	host, _ := os.Hostname()
	this := thisRunner(-1)
	env := measure.Env{Store: st}
	if q, err := qualification(ctx, env, "k", this); err != nil || q != nil {
		t.Fatalf("empty store: %+v, %v", q, err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	put := func(cpu string, fp int) {
		t.Helper()
		q := &store.Qualification{Job: "k", Commit: "c", Runner: store.Runner{Hostname: host, CPUModel: cpu, NProc: this.CPUs},
			LoadStart: 1, LoadEnd: 1, Alpha: 0.05, Runs: 120, Gates: 200, FalsePositives: fp, Fit: true,
			Metrics: []store.QualifiedMetric{{Name: "t_ms", ThresholdPct: 5, NoisePct: 2, DetectablePct: 4.5}},
			Started: at, Finished: at.Add(time.Minute)}
		at = at.Add(time.Hour)
		if err := st.PutQualification(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	put(this.CPUModel, 3)
	q, err := qualification(ctx, env, "k", this)
	if err != nil || q == nil || q.Gates != 200 || math.Abs(q.FalsePositiveRate-0.015) > 1e-9 || q.DetectablePct["t_ms"] != 4.5 || !q.Fit {
		t.Fatalf("quoted %+v, %v", q, err)
	}
	put("Another CPU", 1) // the newest, of another machine of that name
	if q, err := qualification(ctx, env, "k", this); err != nil || q != nil {
		t.Errorf("another machine's qualification quoted: %+v, %v", q, err)
	}
}
