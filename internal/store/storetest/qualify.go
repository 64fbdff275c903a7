package storetest

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
)

// QualificationStore is the part of a store that records perfbot
// qualify's qualifications of runners.
type QualificationStore interface {
	PutQualification(ctx context.Context, q *store.Qualification) error
	Qualifications(ctx context.Context, job, hostname string, n int) ([]store.Qualification, error)
}

var _ QualificationStore = (*store.Store)(nil)

// testQualifications: qualifications round-trip newest first, per runner
// or every runner, NaN figures as NaN and the slowdown as it was; a re-put
// replaces; a record without a job or hostname, or with text a database
// cannot hold, is refused.
func testQualifications(t *testing.T, s Store) {
	ctx := t.Context()
	qs, ok := s.(QualificationStore)
	if !ok {
		t.Fatalf("%T does not record qualifications", s)
	}
	at := func(i int) time.Time { return when.Add(time.Duration(i) * time.Hour) }
	q := func(i int, host string) store.Qualification {
		return store.Qualification{Job: "jk", Commit: "c0ffee", Runner: store.Runner{Hostname: host, CPUModel: "Xeon", Kernel: "Linux 6.1 x86_64", NProc: 4},
			LoadStart: 0.5, LoadEnd: 1.25, Alpha: 0.05, Runs: 40 + i, Gates: 200, FalsePositives: i, Fit: i < 10,
			Metrics: []store.QualifiedMetric{{Name: "t_ms", ThresholdPct: 5, NoisePct: 1.5, DetectablePct: 6.2}, {Name: "x", ThresholdPct: 5, NoisePct: math.NaN(), DetectablePct: math.NaN()}},
			Started: at(i), Finished: at(i).Add(time.Minute)}
	}
	for i, host := range []string{"a", "b", "a"} {
		r := q(i, host)
		if i == 2 {
			r.Slowdown = &store.QualifiedSlowdown{Name: "slow", Sizes: map[string]float64{"t_ms": 10.5}, Gates: 200, Detected: 199, Rounds: 20}
		}
		if err := qs.PutQualification(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := qs.Qualifications(ctx, "jk", "a", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].FalsePositives != 2 || !sameTime(got[0].Started, at(2)) || !sameTime(got[0].Finished, at(2).Add(time.Minute)) ||
		got[0].Runner != (store.Runner{Hostname: "a", CPUModel: "Xeon", Kernel: "Linux 6.1 x86_64", NProc: 4}) || !got[0].Fit ||
		got[0].LoadEnd != 1.25 || got[0].Runs != 42 || got[1].Slowdown != nil {
		t.Fatalf("Qualifications(jk, a) = %+v", got)
	}
	m := got[0].Metrics
	if len(m) != 2 || m[0] != (store.QualifiedMetric{Name: "t_ms", ThresholdPct: 5, NoisePct: 1.5, DetectablePct: 6.2}) || !math.IsNaN(m[1].NoisePct) || !math.IsNaN(m[1].DetectablePct) {
		t.Errorf("metrics %+v", m)
	}
	if sd := got[0].Slowdown; sd == nil || sd.Name != "slow" || sd.Sizes["t_ms"] != 10.5 || sd.Detected != 199 || sd.Rounds != 20 {
		t.Errorf("slowdown %+v", sd)
	}
	if all, _ := qs.Qualifications(ctx, "jk", "", 10); len(all) != 3 || all[1].Runner.Hostname != "b" {
		t.Errorf("every runner: %+v", all)
	}
	if one, _ := qs.Qualifications(ctx, "jk", "", 1); len(one) != 1 {
		t.Errorf("n=1: %d", len(one))
	}
	r := q(2, "a")
	r.FalsePositives, r.Fit = 30, false
	if err := qs.PutQualification(ctx, &r); err != nil {
		t.Fatal(err)
	}
	if got, _ := qs.Qualifications(ctx, "jk", "a", 1); len(got) != 1 || got[0].FalsePositives != 30 || got[0].Fit || got[0].Slowdown != nil {
		t.Errorf("after a re-put: %+v", got)
	}
	if none, _ := qs.Qualifications(ctx, "nosuchjob", "", 5); len(none) != 0 {
		t.Errorf("unknown job: %+v", none)
	}
	for _, bad := range []store.Qualification{
		{Runner: store.Runner{Hostname: "a"}},
		{Job: "jk"},
		{Job: "jk", Runner: store.Runner{Hostname: "a", CPUModel: "bad \x00"}},
	} {
		if err := qs.PutQualification(ctx, &bad); err == nil {
			t.Errorf("PutQualification(%+v) succeeded", bad)
		}
	}
}
