package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/perfbot/perfbot/internal/store"
)

// WatchStore is the watch state a store keeps besides its tested commits
// and findings: broken builds, backfills and anchor decisions.
type WatchStore interface {
	PutBrokenBuild(ctx context.Context, b *store.BrokenBuild) error
	BrokenBuilds(ctx context.Context, job, variant string) (map[string]store.BrokenBuild, error)
	ForgetFailedBuild(ctx context.Context, key string) error
	PutBackfill(ctx context.Context, b *store.Backfill) error
	GetBackfill(ctx context.Context, job, variant, branch string) (*store.Backfill, error)
	DecideAnchorMode(ctx context.Context, job, variant string, anchor bool, reason string) (bool, string, error)
	SetAnchorMode(ctx context.Context, job, variant string, anchor bool, reason string) error
}

var _ WatchStore = (*store.Store)(nil)

// testWatchState: broken builds count their failures per job and variant,
// a failed build record is forgotten (a retry) and a good one kept,
// backfills round-trip per branch, and an anchor decision is made once.
func testWatchState(t *testing.T, s Store) {
	ctx := t.Context()
	ws, ok := s.(WatchStore)
	if !ok {
		t.Fatalf("%T keeps no watch state", s)
	}
	b := &store.BrokenBuild{Job: "j", Commit: "c1", Branch: "main", Failures: 1, Error: "exit status 1", LogPath: "/x/build.log", First: when, Last: when}
	if err := ws.PutBrokenBuild(ctx, b); err != nil {
		t.Fatal(err)
	}
	b.Failures, b.Final, b.Error, b.Last = 2, true, "exit status 2", when.Add(1)
	if err := ws.PutBrokenBuild(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := ws.PutBrokenBuild(ctx, &store.BrokenBuild{Job: "j", Variant: "align64@x", Commit: "c1", Failures: 1, First: when, Last: when}); err != nil {
		t.Fatal(err)
	}
	got, err := ws.BrokenBuilds(ctx, "j", "")
	if err != nil {
		t.Fatal(err)
	}
	g := got["c1"]
	if len(got) != 1 || g.Failures != 2 || !g.Final || g.Error != "exit status 2" || g.LogPath != "/x/build.log" || g.Branch != "main" ||
		!sameTime(g.First, when) || !sameTime(g.Last, when.Add(1)) {
		t.Errorf("broken builds %+v; want c1 failed twice, final, first at %v", got, when)
	}
	if v, _ := ws.BrokenBuilds(ctx, "j", "align64@x"); len(v) != 1 || v["c1"].Final {
		t.Errorf("the variant's broken builds %+v; want c1 once, not final", v)
	}
	if err := ws.PutBrokenBuild(ctx, &store.BrokenBuild{Job: "j", Commit: "c\x00", First: when, Last: when}); err == nil {
		t.Error("a commit with NUL was stored")
	}

	failed := &store.BuildRecord{Key: "kfail", Commit: "c1", Status: store.BuildFailed, Error: "exit status 1", Started: when}
	good := &store.BuildRecord{Key: "kgood", Commit: "c2", Status: store.BuildOK, Started: when}
	for _, r := range []*store.BuildRecord{failed, good} {
		if err := s.PutBuild(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"kfail", "kgood", "knone"} {
		if err := ws.ForgetFailedBuild(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetBuild(ctx, "kfail"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the failed build is still there after ForgetFailedBuild: %v", err)
	}
	if _, err := s.GetBuild(ctx, "kgood"); err != nil {
		t.Errorf("ForgetFailedBuild removed a good build: %v", err)
	}

	if _, err := ws.GetBackfill(ctx, "j", "", "main"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("backfill before any: %v; want ErrNotFound", err)
	}
	bf := &store.Backfill{Job: "j", Branch: "main", Since: "c0", Until: "c9", Started: when}
	if err := ws.PutBackfill(ctx, bf); err != nil {
		t.Fatal(err)
	}
	bf.Done = true
	if err := ws.PutBackfill(ctx, bf); err != nil {
		t.Fatal(err)
	}
	if err := ws.PutBackfill(ctx, &store.Backfill{Job: "j", Branch: "next", Since: "c5", Until: "c7", Started: when}); err != nil {
		t.Fatal(err)
	}
	if g, err := ws.GetBackfill(ctx, "j", "", "main"); err != nil || g.Since != "c0" || g.Until != "c9" || !g.Done || !sameTime(g.Started, when) {
		t.Errorf("backfill of main %+v, %v; want c0..c9, done", g, err)
	}
	if g, err := ws.GetBackfill(ctx, "j", "", "next"); err != nil || g.Since != "c5" || g.Done {
		t.Errorf("backfill of next %+v, %v; want c5.., not done", g, err)
	}

	on, why, err := ws.DecideAnchorMode(ctx, "j", "", true, "default")
	if err != nil || !on || why != "default" {
		t.Fatalf("first decision = %v %q %v; want on, default", on, why, err)
	}
	if on, why, err := ws.DecideAnchorMode(ctx, "j", "", false, "watch file"); err != nil || !on || why != "default" {
		t.Errorf("second decision = %v %q %v; want the first one kept (on, default)", on, why, err)
	}
	if on, _, err := ws.DecideAnchorMode(ctx, "j", "align64@x", false, "watch file"); err != nil || on {
		t.Errorf("the variant's decision = %v, %v; want its own (off)", on, err)
	}
	if err := ws.SetAnchorMode(ctx, "j", "", false, "switched off"); err != nil {
		t.Fatal(err)
	}
	if on, why, err := ws.DecideAnchorMode(ctx, "j", "", true, "default"); err != nil || on || why != "switched off" {
		t.Errorf("after a switch = %v %q %v; want off, switched off", on, why, err)
	}
}
