package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/profile"
	"github.com/perfbot/perfbot/internal/testutil"
)

// layoutSeedDiff diffs the two checked-in symbol maps: the seed report's
// case (a static key removed from .bss) plus a function added before a hot
// one and a gcc clone rename.
func layoutSeedDiff(t *testing.T, hot bool) *layout.DiffResult {
	t.Helper()
	return layoutMapDiff(t, filepath.Join("testdata", "layout_a.map"), filepath.Join("testdata", "layout_b.map"), hot)
}

// layoutDefconfigDiff diffs the synthetic kernel maps of the defconfig
// pattern (internal/layout's defconfigLike): a 16-byte key removed from
// .bss, the shift doubled to -32 at a 32-byte-aligned object, and its
// export entry and name carried into read-only data as -32 too.
func layoutDefconfigDiff(t *testing.T) *layout.DiffResult {
	t.Helper()
	dir := filepath.Join("..", "layout", "testdata")
	return layoutMapDiff(t, filepath.Join(dir, "defconfig-like-A.map"), filepath.Join(dir, "defconfig-like-B.map"), false)
}

func layoutMapDiff(t *testing.T, pathA, pathB string, hot bool) *layout.DiffResult {
	t.Helper()
	a, err := layout.Open(pathA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := layout.Open(pathB)
	if err != nil {
		t.Fatal(err)
	}
	var opt layout.DiffOptions
	if hot {
		h, err := profile.Read(filepath.Join("testdata", "layout_hot.folded"))
		if err != nil {
			t.Fatal(err)
		}
		opt.Hot = h
	}
	return layout.Diff(a, b, opt)
}

func TestLayoutGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		hot  bool
		pad  string
		opt  LayoutOptions
	}{
		{"layout_seed", false, "", LayoutOptions{}},
		{"layout_seed_profile", true, "", LayoutOptions{}},
		{"layout_seed_pad", false, "mutex_stats", LayoutOptions{Symbol: "mutex_stats", Top: 2}},
		{"layout_defconfig", false, "", LayoutOptions{Top: 4, Pairs: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := layoutSeedDiff(t, tc.hot)
			if tc.name == "layout_defconfig" {
				d = layoutDefconfigDiff(t)
			}
			opt := tc.opt
			if tc.pad != "" {
				p, err := layout.ProposePadding(d, tc.pad)
				if err != nil {
					t.Fatal(err)
				}
				opt.Padding = p
			}
			var text, js bytes.Buffer
			if err := WriteLayoutText(&text, d, opt); err != nil {
				t.Fatal(err)
			}
			if err := WriteLayoutJSON(&js, d, opt); err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("testdata", tc.name+".txt"), text.Bytes())
			testutil.Golden(t, filepath.Join("testdata", tc.name+".json"), js.Bytes())
		})
	}
}

// TestLayoutTextSeed checks the facts the text report must carry for the
// seed case, independently of the golden file.
func TestLayoutTextSeed(t *testing.T) {
	d := layoutSeedDiff(t, false)
	var b bytes.Buffer
	if err := WriteLayoutText(&b, d, LayoutOptions{Symbol: "do_one.isra.0"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Symbol do_one.isra.0:",
		"removed mds_user_clear (16 bytes)",
		"added new_fast_path (48 bytes)",
		"mutex_stats  .bss object",
		"offset mod 64 0 -> 48",
		"gained: switch_mm_cond_ibpb and mutex_stats now share line 0xffffffff82001000",
		"ranked by alignment-class change (no profile given)",
		"do_one.isra.0 (was do_one)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	// Shift runs come before the ranked list, which comes before the pairs.
	i, j, k := strings.Index(out, "Where the shifts start"), strings.Index(out, "Most likely to matter"), strings.Index(out, "False-sharing")
	if !(i >= 0 && i < j && j < k) {
		t.Errorf("sections out of order: runs %d, ranked %d, pairs %d", i, j, k)
	}
}

func TestLayoutProfileRanking(t *testing.T) {
	d := layoutSeedDiff(t, true)
	var b bytes.Buffer
	if err := WriteLayoutText(&b, d, LayoutOptions{Top: 1}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "1. mutex_lock  .text func, 60.0% of profile") {
		t.Errorf("mutex_lock (60%% of the profile, moved) not ranked first:\n%s", out)
	}
	if !strings.Contains(out, "more changed symbols") {
		t.Errorf("Top 1 does not say how many more:\n%s", out)
	}
}

// TestLayoutJSONFields decodes the JSON and checks the documented fields.
func TestLayoutJSONFields(t *testing.T) {
	d := layoutSeedDiff(t, false)
	p, err := layout.ProposePadding(d, "")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteLayoutJSON(&b, d, LayoutOptions{Top: -1, Runs: -1, Pairs: -1, Padding: p}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Version int    `json:"version"`
		Ranking string `json:"ranking"`
		A       struct {
			Format  string `json:"format"`
			Symbols int    `json:"symbols"`
		} `json:"a"`
		Stats struct {
			Matched, Removed, Added int
		} `json:"stats"`
		Runs []struct {
			ID      int    `json:"id"`
			Section string `json:"section"`
			Shift   int64  `json:"shift"`
			First   string `json:"first"`
			Causes  []struct {
				Kind   string `json:"kind"`
				Symbol string `json:"symbol"`
				Bytes  int64  `json:"bytes"`
			} `json:"causes"`
		} `json:"runs"`
		Changes []struct {
			Rank  int    `json:"rank"`
			Name  string `json:"name"`
			Run   int    `json:"run"`
			Shift int64  `json:"shift"`
			A, B  struct {
				Addr  string `json:"addr"`
				Off64 uint64 `json:"off64"`
			}
		} `json:"changes"`
		RankedTotal int `json:"ranked_total"`
		Shared      []struct {
			X, Y   string
			Gained bool
		} `json:"shared_lines"`
		Removed []struct{ Name string } `json:"removed"`
		Padding struct {
			Symbol string `json:"symbol"`
			Bytes  uint64 `json:"bytes"`
			Asm    string `json:"asm"`
		} `json:"padding"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 || got.Ranking != "alignment" || got.A.Format != "system.map" || got.A.Symbols == 0 {
		t.Errorf("header: %+v", got)
	}
	if len(got.Changes) != got.RankedTotal || got.RankedTotal == 0 {
		t.Errorf("changes %d, ranked_total %d", len(got.Changes), got.RankedTotal)
	}
	found := false
	for _, r := range got.Runs {
		for _, c := range r.Causes {
			if c.Kind == "removed" && c.Symbol == "mds_user_clear" && c.Bytes == -16 && r.First == "mds_idle_clear" && r.Shift == -16 {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no run from mds_idle_clear caused by removing mds_user_clear: %+v", got.Runs)
	}
	for _, c := range got.Changes {
		if c.Name == "mutex_stats" && (c.A.Addr != "0xffffffff82001040" || c.B.Addr != "0xffffffff82001030" || c.A.Off64 != 0 || c.B.Off64 != 48 || c.Shift != -16) {
			t.Errorf("mutex_stats: %+v", c)
		}
		if c.Run < 0 || c.Run >= len(d.Runs) {
			t.Errorf("%s: run id %d out of range", c.Name, c.Run)
		}
	}
	if len(got.Removed) != 1 || got.Removed[0].Name != "mds_user_clear" {
		t.Errorf("removed %+v", got.Removed)
	}
	if got.Padding.Symbol == "" || got.Padding.Bytes == 0 || !strings.Contains(got.Padding.Asm, ".skip") {
		t.Errorf("padding %+v", got.Padding)
	}
}

// TestLayoutDefconfigRootFirst: in the defconfig pattern the report names
// the removed key first, as the root change and as the first shift run of
// .bss, and every realignment run and the top suspect point to it. (Before
// the trace, the -32 runs said only "alignment padding changed", their
// symbols ranked first, and the key's run came after them.)
func TestLayoutDefconfigRootFirst(t *testing.T) {
	d := layoutDefconfigDiff(t)
	var b bytes.Buffer
	if err := WriteLayoutText(&b, d, LayoutOptions{Top: 3}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	roots := out[strings.Index(out, "Root changes"):strings.Index(out, "Where the shifts start")]
	if !strings.Contains(roots, "   1. removed mds_user_clear (16 bytes), removed __ksymtab_mds_user_clear (12 bytes)") ||
		strings.Contains(roots, "   2. ") {
		t.Errorf("root changes:\n%s", roots)
	}
	runs := out[strings.Index(out, "Where the shifts start"):strings.Index(out, "Most likely to matter")]
	lines := strings.Split(strings.TrimSpace(runs), "\n")[1:]
	bss := -1
	for i, l := range lines {
		if strings.Contains(l, ".bss") {
			bss = i
			break
		}
	}
	if bss < 0 || !strings.Contains(lines[bss], "-16  from mds_idle_clear") || !strings.Contains(lines[bss], "removed mds_user_clear (16 bytes)") {
		t.Errorf("the first .bss run is not the key's:\n%s", runs)
	}
	if n := strings.Count(runs, "; root change 1: removed mds_user_clear (16 bytes)"); n != 2 {
		t.Errorf("%d realignment runs name the root change, want 2:\n%s", n, runs)
	}
	top := out[strings.Index(out, "   1. "+d.Ranked[0].Name()):]
	if !strings.Contains(top[:strings.Index(top, "\n   2. ")], "root change 1: removed mds_user_clear") {
		t.Errorf("the top suspect does not name its root change:\n%s", top)
	}

	var js bytes.Buffer
	if err := WriteLayoutJSON(&js, d, LayoutOptions{Runs: -1}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		RootChanges []struct {
			Rank   int
			Causes []struct{ Kind, Symbol, Table string }
			Runs   []int
			Moved  int
		} `json:"root_changes"`
		Runs []struct {
			ID         int
			Shift      int64
			Carried    bool
			Root, From int
			RootChange int `json:"root_change"`
		}
		Changes []struct {
			Name       string
			RootChange int `json:"root_change"`
		}
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.RootChanges) != 1 || got.RootChanges[0].Moved != d.Stats.Moved || len(got.RootChanges[0].Runs) != 5 ||
		got.RootChanges[0].Causes[0].Symbol != "mds_user_clear" {
		t.Errorf("root_changes %+v", got.RootChanges)
	}
	carried := 0
	for _, r := range got.Runs {
		if r.RootChange != 1 || r.Carried && (r.Root == r.ID || r.From < 0) {
			t.Errorf("run %+v", r)
		}
		if r.Carried && r.Shift == -32 {
			carried++
		}
	}
	if carried != 2 || got.Changes[0].RootChange != 1 {
		t.Errorf("%d carried -32 runs, top change %+v", carried, got.Changes[0])
	}
}
