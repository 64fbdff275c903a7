package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// bugsC is an excerpt in the style of the kernel's bugs.c: macros, exports,
// comments holding braces and semicolons, a multi-line function, a
// preprocessor line with a continuation, a string with a brace.
const bugsC = `// SPDX-License-Identifier: GPL-2.0
#include <linux/init.h>
#define X(a) \
	do { a; } while (0)

/* Control unconditional IBPB in switch_mm() { ; */
DEFINE_STATIC_KEY_FALSE(switch_mm_always_ibpb);

/* Control MDS CPU buffer clear before idling (halt, mwait) */
DEFINE_STATIC_KEY_FALSE(mds_idle_clear);
EXPORT_SYMBOL_GPL(mds_idle_clear);

static const char *names[] = {
	"a{", "b;",
};

static void __init
spectre_init(int x)
{
	static int calls;
	if (x) {
		calls++;
	}
}
extern int later;
int later = 3;
`

func TestScanC(t *testing.T) {
	f := scanC([]byte(bugsC))
	line := func(sub string) int {
		for i, l := range f.lines {
			if strings.Contains(l, sub) {
				return i
			}
		}
		t.Fatalf("no line holds %q", sub)
		return -1
	}
	cases := []struct {
		name       string
		at         string // the definition's line
		end, start string // where its statement ends and starts
		body       bool
	}{
		{"switch_mm_always_ibpb", "(switch_mm_always_ibpb);", "(switch_mm_always_ibpb);", "/* Control unconditional", false},
		{"mds_idle_clear", "DEFINE_STATIC_KEY_FALSE(mds_idle_clear)", "DEFINE_STATIC_KEY_FALSE(mds_idle_clear)", "/* Control MDS", false},
		{"names", "*names[]", "};", "*names[]", false},
		{"spectre_init", "spectre_init(int x)", "^}", "static void __init", true},
		{"calls", "static int calls;", "static int calls;", "static int calls;", false},
	}
	for _, c := range cases {
		l := line(c.at)
		end, body, ok := f.stmtEnd(l)
		wantEnd := -1
		if c.end == "^}" {
			for i, s := range f.lines {
				if s == "}" {
					wantEnd = i
				}
			}
		} else {
			wantEnd = line(c.end)
			if c.end == "};" {
				wantEnd = line("\"a{\"") + 1
			}
		}
		if !ok || end != wantEnd || body != c.body {
			t.Errorf("%s: statement ends at %d (body %v, ok %v), want %d (body %v)", c.name, end, body, ok, wantEnd, c.body)
		}
		if got, want := f.stmtStart(l), line(c.start); got != want {
			t.Errorf("%s: statement starts at %d (%q), want %d", c.name, got, f.lines[got], want)
		}
	}
	// After mds_idle_clear means after its export too.
	if got, want := f.afterExports(line("(mds_idle_clear);"), "mds_idle_clear"), line("EXPORT_SYMBOL_GPL")+1; got != want {
		t.Errorf("afterExports: %d, want %d", got, want)
	}
	for name, want := range map[string]string{"switch_mm_always_ibpb": "DEFINE_STATIC_KEY_FALSE(switch_mm_always_ibpb)",
		"later": "int later = 3;", "names": "*names[]"} {
		if got := f.findDef(name, false); got < 0 || !strings.Contains(f.lines[got], want) {
			t.Errorf("findDef(%s) = %d, want the line %q", name, got, want)
		}
	}
	if got := f.findDef("spectre_init", true); got != line("spectre_init(int x)") {
		t.Errorf("findDef(spectre_init) = %d", got)
	}
	if got := f.findDef("calls", false); got != -1 {
		t.Errorf("findDef(calls) = %d, want -1 (function-local)", got)
	}
}

// TestUnifiedInsertGitApply checks that git apply takes the patches
// unifiedInsert writes, at the start, middle and end of files with and
// without a final newline, and gives what insertLines says.
func TestUnifiedInsertGitApply(t *testing.T) {
	testutil.NeedTool(t, "git")
	for _, src := range []string{"a\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nd\ne\nf\ng", "one", "one\n"} {
		f := scanC([]byte(src))
		for at := 0; at <= len(f.lines); at++ {
			repo := testutil.NewGitRepo(t)
			repo.Commit("base", map[string]string{"x.c": src})
			ins := []string{"/* pad */", "char p[16];"}
			patch := filepath.Join(t.TempDir(), "p.diff")
			if err := os.WriteFile(patch, []byte(unifiedInsert("x.c", f, at, ins, 3)), 0o644); err != nil {
				t.Fatal(err)
			}
			repo.Git("apply", patch)
			got, _ := os.ReadFile(filepath.Join(repo.Dir, "x.c"))
			if want := string(insertLines(f, at, ins)); string(got) != want {
				t.Errorf("%q at %d: git apply gave %q, insertLines %q", src, at, got, want)
			}
		}
	}
}
