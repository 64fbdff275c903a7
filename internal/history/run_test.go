package history

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/store"
)

// TestRun: the recipe reads the anchor and the handled changes that watch
// records: without an anchor no point has a ratio; with one, the points
// measured beside it have theirs, and the change watch handled between c2
// and c3 comes with its culprit. Read through a memo with the tested
// commits given (the dashboard) it is the same history as read plainly
// (perfbot history).
func TestRun(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := &sessionRuns{st: st, rng: rand.New(rand.NewPCG(3, 4))}
	s.cycle(t, 1, "", map[string]float64{"c0": 1}, []string{"c0"})
	s.cycle(t, 2, "c0", map[string]float64{"c0": 1, "c1": 1, "c2": 1}, []string{"c1", "c2"})
	s.cycle(t, 1, "c2", map[string]float64{"c2": 1, "c3": 1.2, "c0": 1}, []string{"c3"})
	list := []gitrev.Commit{{Hash: "c0"}, {Hash: "c1"}, {Hash: "c2"}, {Hash: "c3"}}
	cfg := Config{Store: st, JobKey: "job", JobName: "bench", Metric: "ms", Commits: list}

	plain, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Points) != 4 || len(plain.Changes) != 0 {
		t.Fatalf("%d points, changes %+v: want 4 points and no change handled", len(plain.Points), plain.Changes)
	}
	for _, p := range plain.Points {
		if p.Ratio != 0 {
			t.Errorf("point %s has ratio %.3f without an anchor", p.Commit.Hash, p.Ratio)
		}
	}

	if err := st.PutState(ctx, AnchorKind, AnchorKey("job", ""), []byte("c0")); err != nil {
		t.Fatal(err)
	}
	if err := st.PutState(ctx, ChangeKind, ChangeKey("job", "", "ms", "c2", "c3"), []byte("c3")); err != nil {
		t.Fatal(err)
	}
	got, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{1, 1, 1, 1.2} {
		if p := got.Points[i]; math.Abs(p.Ratio-want) > 0.03 {
			t.Errorf("point %s: ratio to the anchor %.3f, want %.3f", p.Commit.Hash, p.Ratio, want)
		}
	}
	if len(got.Changes) != 1 || got.Changes[0].Index != 3 || len(got.Changes[0].Culprits) != 1 || got.Changes[0].Culprits[0].Commit != "c3" ||
		got.Changes[0].Step < 17 || got.Changes[0].Step > 23 {
		t.Errorf("changes %+v: want the +20%% step c2..c3 with its culprit c3", got.Changes)
	}

	tested, err := st.TestedCommits(ctx, "job", "")
	if err != nil {
		t.Fatal(err)
	}
	memo := &Memo{}
	for range 2 { // the second read through the memo's steps and ratios
		cfg := cfg
		cfg.Memo, cfg.Tested = memo, tested
		viaMemo, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(viaMemo, got) {
			t.Errorf("through a memo:\n%+v\nwant the plain read's\n%+v", viaMemo, got)
		}
	}
}

func TestRunCheck(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ok := Config{Store: st, JobKey: "job", Metric: "ms", Commits: []gitrev.Commit{}}
	for _, c := range []struct {
		name string
		cfg  func(Config) Config
		want string
	}{
		{"ok", func(c Config) Config { return c }, ""},
		{"alpha", func(c Config) Config { c.Alpha = 2; return c }, "--alpha 2: want a level between 0 and 1"},
		{"no commits", func(c Config) Config { c.Commits = nil; return c }, "no commits and no repository"},
		{"no metric", func(c Config) Config { c.Metric = ""; return c }, "a metric"},
	} {
		err := c.cfg(ok).Check()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: Check() = %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := VariantOf("warm", "c", st.Dir()); err == nil || !strings.Contains(err.Error(), `history "warm": want plain or forced`) {
		t.Errorf("VariantOf(warm) = %v", err)
	}
	if v, err := VariantOf("forced", "", st.Dir()); err != nil || !strings.HasPrefix(v, "align") {
		t.Errorf("VariantOf(forced) = %q, %v: want the c preset's forced alignment", v, err)
	}
}
