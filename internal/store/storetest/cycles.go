package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
)

// CycleStore is the part of a store that records perfbot watch's cycles.
type CycleStore interface {
	PutCycle(ctx context.Context, c *store.CycleRecord) error
	Cycles(ctx context.Context, job string, n int) ([]store.CycleRecord, error)
	FailStreak(ctx context.Context, job string) ([]store.CycleRecord, error)
}

var _ CycleStore = (*store.Store)(nil)

// testCycles: job cycles round-trip newest first, per job or all jobs; a
// re-put replaces; the failure streak ends at the newest cycle that went
// through; text a database cannot hold is refused.
func testCycles(t *testing.T, s Store) {
	ctx := t.Context()
	cs, ok := s.(CycleStore)
	if !ok {
		t.Fatalf("%T does not record cycles", s)
	}
	put := func(c store.CycleRecord) {
		t.Helper()
		if err := cs.PutCycle(ctx, &c); err != nil {
			t.Fatal(err)
		}
	}
	at := func(i int) time.Time { return when.Add(time.Duration(i) * time.Minute) }
	for i, e := range []string{"", "job b: build: disk full", "", "boom", "boom"} {
		put(store.CycleRecord{Job: "ja", Name: "a", Cycle: at(i).UnixNano(), Started: at(i), Finished: at(i).Add(time.Second),
			Tested: i, Error: e, Panicked: i == 4})
	}
	put(store.CycleRecord{Job: "file:/x/b.yaml", Name: "/x/b.yaml", Cycle: at(4).UnixNano(), Started: at(4), Finished: at(4), Error: "b.yaml:3: bad"})

	got, err := cs.Cycles(ctx, "ja", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0].Cycle != at(4).UnixNano() || !got[0].Panicked || got[0].Tested != 4 ||
		!sameTime(got[0].Started, at(4)) || !sameTime(got[0].Finished, at(4).Add(time.Second)) || got[4].Failed() {
		t.Errorf("Cycles(ja) = %+v", got)
	}
	if all, _ := cs.Cycles(ctx, "", 10); len(all) != 6 || all[0].Cycle != at(4).UnixNano() || all[1].Cycle != at(4).UnixNano() {
		t.Errorf("Cycles(all) = %+v; want 6, the two of the newest cycle first", all)
	}
	if two, _ := cs.Cycles(ctx, "ja", 2); len(two) != 2 {
		t.Errorf("Cycles(ja, 2) returned %d", len(two))
	}
	streak, err := cs.FailStreak(ctx, "ja")
	if err != nil || len(streak) != 2 || streak[1].Cycle != at(3).UnixNano() {
		t.Errorf("FailStreak(ja) = %+v, %v; want the cycles 4 and 3", streak, err)
	}
	// The notice goes on the record; a re-put replaces the row.
	streak[0].Noticed = true
	put(streak[0])
	if got, _ := cs.Cycles(ctx, "ja", 1); len(got) != 1 || !got[0].Noticed || got[0].Error != "boom" {
		t.Errorf("after marking the notice: %+v", got)
	}
	put(store.CycleRecord{Job: "ja", Name: "a", Cycle: at(5).UnixNano(), Started: at(5), Finished: at(5)})
	if streak, _ := cs.FailStreak(ctx, "ja"); len(streak) != 0 {
		t.Errorf("after a cycle that went through, FailStreak = %+v", streak)
	}
	if streak, _ := cs.FailStreak(ctx, "nosuchjob"); len(streak) != 0 {
		t.Errorf("FailStreak of an unknown job = %+v", streak)
	}
	for _, bad := range []store.CycleRecord{
		{Job: "", Name: "x", Cycle: 1},
		{Job: "ja", Name: "x", Cycle: 2, Error: "nul \x00 byte"},
		{Job: "ja", Name: "x", Cycle: 3, Error: "bad \xff byte"},
	} {
		if err := cs.PutCycle(ctx, &bad); err == nil {
			t.Errorf("PutCycle(%q) succeeded", bad.Error)
		}
	}
}
