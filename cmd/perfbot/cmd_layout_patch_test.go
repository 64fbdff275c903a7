package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// TestLayoutDiffPatch is the seed report's proof from the command line:
// commit B removes a static key; perfbot layout diff --patch prints a
// patch that git apply takes; the patched build, checked with
// --patch-check, has every .bss address of A back, and B itself does not.
func TestLayoutDiffPatch(t *testing.T) {
	testutil.NeedTool(t, "gcc", "nm", "git")
	repo := testutil.NewGitRepo(t)
	srcA := strings.Replace(layoutDataSrc, "#ifdef WITH_KEY\n", "", 1)
	srcA = strings.Replace(srcA, "struct static_key mds_user_clear;\n#endif\n", "struct static_key mds_user_clear;\n", 1)
	srcB := strings.Replace(srcA, "struct static_key mds_user_clear;\n", "", 1)
	dir := t.TempDir()
	build := func(out string) string {
		p := filepath.Join(dir, out)
		layoutRun(t, repo.Dir, "gcc", "-g", "-O2", "-o", p, "main.c")
		return p
	}
	repo.Commit("A", map[string]string{"main.c": srcA})
	a := build("a")
	repo.Commit("B: remove mds_user_clear", map[string]string{"main.c": srcB})
	b := build("b")

	code, out, errs := layoutPerfbot("layout", "diff", "--patch", repo.Dir, a, b)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"# root change: removed mds_user_clear (.bss)", "diff --git a/main.c b/main.c",
		"+char __perfbot_pad_mds_user_clear[16] __attribute__((__used__, __aligned__(16)));"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, js, errs := layoutPerfbot("layout", "diff", "--patch", repo.Dir, "--format", "json", a, b)
	var got struct {
		RootSymbol string `json:"root_symbol"`
		File       string `json:"file"`
		Anchor     string `json:"anchor"`
		Bytes      uint64 `json:"bytes"`
		Exact      bool   `json:"exact"`
		Diff       string `json:"diff"`
	}
	if err := json.Unmarshal([]byte(js), &got); code != exitOK || err != nil {
		t.Fatalf("--format json: exit %d, %v: %s%s", code, err, js, errs)
	}
	schematest.ValidateJSON(t, "layout-patch", []byte(js))
	if got.RootSymbol != "mds_user_clear" || got.File != "main.c" || got.Anchor != "switch_mm_always_ibpb" ||
		got.Bytes != 16 || !got.Exact || !strings.Contains(out, got.Diff) {
		t.Errorf("--format json: %+v", got)
	}
	// B itself does not pass the check.
	if code, out, _ := layoutPerfbot("layout", "diff", "--patch", repo.Dir, "--patch-check", b, a, b); code != 1 || !strings.Contains(out, "not restored") {
		t.Errorf("--patch-check on B: exit %d, want 1 and \"not restored\":\n%s", code, out)
	}
	fix := filepath.Join(dir, "fix.diff")
	if err := os.WriteFile(fix, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	repo.Git("apply", fix)
	c := build("c")
	code, out, errs = layoutPerfbot("layout", "diff", "--patch", repo.Dir, "--patch-check", c, a, b)
	if code != exitOK || !strings.Contains(out, "restored: .bss:") || !strings.Contains(out, "where mds_user_clear was") {
		t.Errorf("--patch-check: exit %d, want 0, restored:\n%s%s", code, out, errs)
	}
	code, js, errs = layoutPerfbot("layout", "diff", "--patch", repo.Dir, "--patch-check", c, "-f", "json", a, b)
	var checked struct {
		Version int `json:"version"`
		Check   *struct {
			Restored bool `json:"restored"`
		} `json:"check"`
	}
	if err := json.Unmarshal([]byte(js), &checked); code != exitOK || err != nil || checked.Version != 1 || checked.Check == nil || !checked.Check.Restored {
		t.Errorf("--patch-check -f json: exit %d, %v, want version 1 and restored: %s%s", code, err, js, errs)
	}
	schematest.ValidateJSON(t, "layout-patch", []byte(js))
	if x := layoutNM(t, c, "x"); x != layoutNM(t, a, "x") {
		t.Errorf("x at %#x in the patched build, %#x in A", x, layoutNM(t, a, "x"))
	}
	if code, _, errs := layoutPerfbot("layout", "diff", "--patch-check", c, a, b); code != exitError || !strings.Contains(errs, "need --patch") {
		t.Errorf("--patch-check without --patch: exit %d, %s", code, errs)
	}
}
