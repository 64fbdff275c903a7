package watch

import (
	"context"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/store"
)

// TestAnchorMode: a new history keeps an anchor by default, decided once
// and stored; a history begun without one (before the decision was
// stored) keeps its mode; anchor: in the watch file switches a history,
// and switched off it forgets its anchor, so that switched on again its
// ratios start afresh. A real SQLite store.
func TestAnchorMode(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := &Watcher{Logf: t.Logf}
	plain := hist{name: "plain"}
	mode := func(jc JobConfig, key string) bool {
		t.Helper()
		on, err := w.anchorMode(ctx, st, jc, "bench", key, plain)
		if err != nil {
			t.Fatal(err)
		}
		return on
	}
	if !mode(JobConfig{}, "new") {
		t.Error("a new history without anchor: in the watch file keeps no anchor; want the default, on")
	}
	// An old history: tested commits and no anchor, no decision stored.
	if err := st.PutTested(ctx, &store.Tested{Job: "old", Commit: "c1", Session: "s", When: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if mode(JobConfig{}, "old") {
		t.Error("a history begun without an anchor was switched on by the default")
	}
	// The decision holds once the history has commits.
	if err := st.PutTested(ctx, &store.Tested{Job: "new", Commit: "c1", Session: "s", When: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if !mode(JobConfig{}, "new") {
		t.Error("the new history lost its stored decision")
	}
	if err := setAnchor(ctx, st, "new", "", "c1"); err != nil {
		t.Fatal(err)
	}
	if mode(JobConfig{Anchor: false, AnchorSet: true}, "new") {
		t.Error("anchor: false in the watch file did not switch the history off")
	}
	if a, _ := history.Anchor(ctx, st, "new", ""); a != "" {
		t.Errorf("switched off, the history still has the anchor %q", a)
	}
	if mode(JobConfig{}, "new") {
		t.Error("the switch was not stored: without anchor: the history is on again")
	}
	if !mode(JobConfig{Anchor: true, AnchorSet: true}, "old") {
		t.Error("anchor: true did not switch the old history on")
	}
}
