package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// srcMain is the project's main.c: a hot loop over other.c's arrays and
// calls into data.c.
const srcMain = `extern float hot_x[1024], hot_y[1024];
long bump(void);
long hot_loop(int n);
int main(int argc, char **argv) {
	(void)argv;
	return (int)(hot_loop(argc * 1000) + bump()) & 1;
}
`

// srcOther is other.c, linked after data.c: its objects and its hot
// function move with whatever data.c's change shifts.
const srcOther = `float hot_x[1024];
float hot_y[1024];
long other_c;
int hot_table[256] = { 1 };
const int hot_ro[256] = { 1 };
long hot_loop(int n) {
	float a = n;
	for (int r = 0; r < n; r++)
		for (int i = 0; i < 1024; i++)
			hot_y[i] += a * hot_x[i];
	return (long)hot_y[n & 1023] + other_c + hot_table[n & 255] + hot_ro[n & 255];
}
`

// srcCase is one source patch test: data.c in commit A; commit B drops
// (or, for added, keeps only there) the lines marked "// ONLY_A" or
// "// ONLY_B".
type srcCase struct {
	name     string
	data     string
	flags    []string
	root     PatchRoot
	nmTypes  string // nm letters of the section
	noDWARF  bool   // build in-tree without -g; diff nm listings
	anchor   string // the symbol the spot must be next to
	after    bool
	wantLine string // a line the definition must follow
	other    string // other.c, when not srcOther
	// realigned names a suspect whose shift run only realigned: the root
	// change must be found behind it, and it must come back too.
	realigned string
}

const bssData = `/* data.c: static keys, as in the kernel's bugs.c */
struct static_key { long enabled; void *entries; };

struct static_key first_key; // ONLY_A

/* Control conditional STIBP in switch_to() */
struct static_key switch_to_cond_stibp;
/* Control conditional IBPB in switch_mm() */
struct static_key switch_mm_cond_ibpb;
/* Control unconditional IBPB in switch_mm() */
struct static_key switch_mm_always_ibpb;

/* Control MDS CPU buffer clear before returning to user space */
struct static_key mds_user_clear; // ONLY_A

/* Control MDS CPU buffer clear before idling (halt, mwait) */
struct static_key mds_idle_clear;
static long counter;
long counter2;
char added_buf[24]; // ONLY_B
long last_global[2]; // ONLY_A

long bump(void) { return ++counter + counter2 + mds_idle_clear.enabled; }
`

const dataData = `long dv_a[2] = { 1, 2 };
int dv_b = 3;
long removed_d[2] = { 4, 5 }; // ONLY_A
int dv_c[3] = { 6, 7, 8 };
char dv_d[5] = "abcd";
long bump(void) { return dv_a[1] + dv_b + dv_c[2] + dv_d[1]; }
`

const rodataData = `const long ro_a[2] = { 1, 2 };
const int ro_b = 3;
const long removed_r[2] = { 4, 5 }; // ONLY_A
const int ro_c[3] = { 6, 7, 8 };
long bump(void) { return ro_a[1] + ro_b + ro_c[2]; }
`

const textData = `__attribute__((noinline)) long t_a(long x) { return x * 3 + 1; }
__attribute__((noinline)) long t_b(long x) { long s = 0; for (long i = 0; i < x; i++) s += i ^ x; return s; }
__attribute__((noinline)) long removed_fn(long x) { long s = x; if (x > 3) s = s * 5 - 1; return s ^ (x << 2); } // ONLY_A
__attribute__((noinline)) long t_c(long x) { return x * x - 5; }
long bump(void) { return t_a(1) + t_b(2) + t_c(3); }
`

// realignData ends data.c's .bss (emitted in reverse) off a 32-byte
// boundary, so that the 16 bytes removed become 32 at other.c's 32-byte
// aligned array: the array's run is a realignment, not the removal.
const realignData = `char tail;
struct static_key { long enabled; void *entries; };
struct static_key k1;
struct static_key k2;
struct static_key mds_user_clear; // ONLY_A
struct static_key k3;
long k4;
long bump(void) { return tail + k4; }
`

const realignOther = `float hot_x[1024];
long o1;
long o2;
long hot_loop(int n) { return (long)hot_x[n & 1023] + o1 + o2; }
`

var srcCases = []srcCase{
	{name: "bss-realigned", data: realignData, other: realignOther, flags: []string{"-O2"}, nmTypes: "bB",
		root:   PatchRoot{Kind: Removed, Symbol: "mds_user_clear", Section: ".bss"},
		anchor: "k2", after: true, realigned: "hot_x"},
	{name: "bss", data: bssData, flags: []string{"-O2"}, nmTypes: "bB",
		root:   PatchRoot{Kind: Removed, Symbol: "mds_user_clear", Section: ".bss"},
		anchor: "switch_mm_always_ibpb", after: true, wantLine: "struct static_key switch_mm_always_ibpb;"},
	{name: "bss-source-order", data: bssData, flags: []string{"-O2", "-fno-toplevel-reorder"}, nmTypes: "bB",
		root:   PatchRoot{Kind: Removed, Symbol: "mds_user_clear", Section: ".bss"},
		anchor: "switch_mm_always_ibpb", after: true},
	{name: "bss-edge", data: bssData, flags: []string{"-O2"}, nmTypes: "bB",
		root:   PatchRoot{Kind: Removed, Symbol: "first_key", Section: ".bss"},
		anchor: "switch_to_cond_stibp", after: false},
	{name: "bss-first", data: bssData, flags: []string{"-O2"}, nmTypes: "bB",
		root:   PatchRoot{Kind: Removed, Symbol: "last_global", Section: ".bss"},
		anchor: "counter2", after: true},
	{name: "bss-added", data: bssData, flags: []string{"-O2"}, nmTypes: "bB",
		root: PatchRoot{Kind: Added, Symbol: "added_buf", Section: ".bss"}},
	{name: "data", data: dataData, flags: []string{"-O2"}, nmTypes: "dD",
		root: PatchRoot{Kind: Removed, Symbol: "removed_d", Section: ".data"}, anchor: "dv_b", after: true},
	{name: "rodata", data: rodataData, flags: []string{"-O2"}, nmTypes: "rR",
		root: PatchRoot{Kind: Removed, Symbol: "removed_r", Section: ".rodata"}, anchor: "ro_b", after: true},
	{name: "text", data: textData, flags: []string{"-O2"}, nmTypes: "tT",
		root: PatchRoot{Kind: Removed, Symbol: "removed_fn", Section: ".text"}, anchor: "t_b", after: true},
	{name: "text-O0", data: textData, flags: []string{"-O0"}, nmTypes: "tT",
		root: PatchRoot{Kind: Removed, Symbol: "removed_fn", Section: ".text"}, anchor: "t_b", after: true},
	{name: "bss-no-dwarf", data: bssData, flags: []string{"-O2"}, nmTypes: "bB", noDWARF: true,
		root:   PatchRoot{Kind: Removed, Symbol: "mds_user_clear", Section: ".bss"},
		anchor: "switch_mm_always_ibpb", after: true},
}

// version returns data.c as commit A (b false) or B has it: a line
// marked ONLY_A that names sym is dropped in B, one marked ONLY_B is only
// in B when it names sym, and never otherwise.
func version(src string, b bool, sym string) string {
	var out []string
	for _, l := range strings.Split(src, "\n") {
		mine := hasWord(l, sym)
		if (b && mine && strings.HasSuffix(l, "// ONLY_A")) || (!(b && mine) && strings.HasSuffix(l, "// ONLY_B")) {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// buildProject builds the project in dir into out: with -g in one gcc
// call, or without DWARF in-tree (objects beside the sources, as the
// kernel builds) and an nm listing beside out (out.map).
func buildProject(t *testing.T, dir, out string, c srcCase) {
	t.Helper()
	srcs := []string{"main.c", "data.c", "other.c"}
	if !c.noDWARF {
		runCmd(t, dir, "gcc", append(append([]string{"-g"}, c.flags...), append([]string{"-o", out}, srcs...)...)...)
		return
	}
	var objs []string
	for _, s := range srcs {
		o := strings.TrimSuffix(s, ".c") + ".o"
		runCmd(t, dir, "gcc", append(append([]string{}, c.flags...), "-c", "-o", o, s)...)
		objs = append(objs, o)
	}
	runCmd(t, dir, "gcc", append([]string{"-o", out}, objs...)...)
	if err := os.WriteFile(out+".map", []byte(runCmd(t, dir, "nm", "-n", out)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSourcePatchRestores is the seed report's proof, automated: commit B
// changes one global of data.c; the source patch made from the two builds
// and B's source is applied with git apply, the patched source rebuilt,
// and every symbol of the section from the spot on must be back where
// commit A had it (nm says so too), or at its offset mod 64 for a symbol
// added.
func TestSourcePatchRestores(t *testing.T) {
	testutil.NeedTool(t, "gcc", "nm", "git")
	for _, c := range srcCases {
		t.Run(c.name, func(t *testing.T) {
			repo := testutil.NewGitRepo(t)
			other := c.other
			if other == "" {
				other = srcOther
			}
			files := map[string]string{"main.c": srcMain, "other.c": other, "data.c": version(c.data, false, c.root.Symbol),
				".gitignore": "*.o\n"}
			repo.Commit("A", files)
			dir := t.TempDir()
			pa, pb, pc := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
			buildProject(t, repo.Dir, pa, c)
			repo.Commit("B: change data.c", map[string]string{"data.c": version(c.data, true, c.root.Symbol)})
			buildProject(t, repo.Dir, pb, c)

			inA, inB := pa, pb
			if c.noDWARF {
				inA, inB = pa+".map", pb+".map"
			}
			old, new := mustOpen(t, inA), mustOpen(t, inB)
			d := Diff(old, new, DiffOptions{})
			if c.realigned != "" {
				x := changeOf(t, d, c.realigned)
				if x.Run < 0 || !hasCause(&d.Runs[x.Run], Realigned, "") || hasCause(&d.Runs[x.Run], Removed, "") {
					t.Fatalf("%s's run is not a plain realignment: the case tests nothing", c.realigned)
				}
			}
			root, suspect, err := PatchRootFor(d, c.realigned)
			if c.root.Kind == Removed && !c.noDWARF && (err != nil || root.Symbol != c.root.Symbol || root.Kind != Removed) {
				t.Errorf("PatchRootFor: %v, %v; want %v", root, err, c.root)
			}
			sus := ""
			if suspect != nil {
				sus = suspect.Name()
			}
			sp, err := SourcePatchWith(old, new, c.root, PatchOptions{SrcDir: repo.Dir, Suspect: sus})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: spot %s:%d (%s), %s\n%s", c.name, c.root, sp.File, sp.Line, sp.Order, sp.From, sp.Diff)
			for _, n := range sp.Notes {
				t.Logf("note: %s", n)
			}
			if c.anchor != "" && (sp.Anchor != c.anchor || sp.After != c.after) {
				t.Errorf("spot next to %s (after %v), want %s (after %v)", sp.Anchor, sp.After, c.anchor, c.after)
			}
			patchFile := filepath.Join(dir, "fix.diff")
			if err := os.WriteFile(patchFile, []byte(sp.Diff), 0o644); err != nil {
				t.Fatal(err)
			}
			repo.Git("apply", "--check", patchFile)
			repo.Git("apply", patchFile)
			got, err := os.ReadFile(filepath.Join(repo.Dir, sp.File))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(sp.Patched()) {
				t.Errorf("git apply gave\n%s\nPatched() says\n%s", got, sp.Patched())
			}
			if c.wantLine != "" && !strings.Contains(string(got), c.wantLine+"\n\n"+sp.Def[0]) {
				t.Errorf("the definition does not follow %q:\n%s", c.wantLine, got)
			}
			buildProject(t, repo.Dir, pc, c)

			res := sp.Check(mustOpen(t, pc), mustOpen(t, pa))
			t.Logf("check: %s", res)
			if !res.Restored {
				t.Errorf("not restored: %+v", res)
			}
			if res.After < 2 {
				t.Errorf("only %d symbols after the spot: the case tests too little", res.After)
			}
			checkNM(t, pa, pc, c, sp)
		})
	}
}

// checkNM checks with nm that every symbol of the section at or after the
// spot in A is at the same address (or offset mod 64) in the patched build.
func checkNM(t *testing.T, pa, pc string, c srcCase, sp *SrcPatch) {
	t.Helper()
	list := func(p string) map[string]uint64 {
		m := map[string]uint64{}
		for _, l := range strings.Split(runCmd(t, filepath.Dir(p), "nm", "-n", p), "\n") {
			f := strings.Fields(l)
			if len(f) == 3 && strings.Contains(c.nmTypes, f[1]) {
				var a uint64
				for _, ch := range f[0] {
					a = a*16 + uint64(strings.IndexRune("0123456789abcdef", ch))
				}
				m[f[2]] = a
			}
		}
		return m
	}
	a, p := list(pa), list(pc)
	n := 0
	for name, addr := range a {
		if addr < sp.spot || name == c.root.Symbol {
			continue
		}
		got, ok := p[name]
		switch {
		case !ok:
			t.Errorf("nm: %s (%#x in A) is not in the patched build", name, addr)
		case sp.Exact && got != addr:
			t.Errorf("nm: %s is at %#x in the patched build, %#x in A", name, got, addr)
		case !sp.Exact && got%64 != addr%64:
			t.Errorf("nm: %s is at %#x (mod 64: %d) in the patched build, %#x (%d) in A", name, got, got%64, addr, addr%64)
		}
		n++
	}
	if n == 0 {
		t.Errorf("nm: no %s symbol after the spot", c.nmTypes)
	}
}

// TestSourcePatchErrors: a build without DWARF and without objects beside
// the sources cannot say where a removed symbol was; a symbol in both
// builds was not removed.
func TestSourcePatchErrors(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	src := t.TempDir()
	dir := t.TempDir()
	write := func(body string) {
		files := map[string]string{"main.c": srcMain, "other.c": srcOther, "data.c": body}
		for n, c := range files {
			if err := os.WriteFile(filepath.Join(src, n), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	build := func(out string, g bool) *Binary {
		args := []string{"-O2", "-o", filepath.Join(dir, out), "main.c", "data.c", "other.c"}
		if g {
			args = append([]string{"-g"}, args...)
		}
		runCmd(t, src, "gcc", args...)
		return mustOpen(t, filepath.Join(dir, out))
	}
	root := PatchRoot{Kind: Removed, Symbol: "mds_user_clear", Section: ".bss"}
	write(version(bssData, false, root.Symbol))
	a := build("a", false)
	write(version(bssData, true, root.Symbol))
	b := build("b", false)
	if _, err := SourcePatch(a, b, root, src); err == nil || !strings.Contains(err.Error(), "build with -g") {
		t.Errorf("no DWARF, no objects: err %v, want one that says to build with -g", err)
	}
	bg := build("bg", true)
	if _, err := SourcePatch(bg, bg, root, src); err == nil || !strings.Contains(err.Error(), "no symbol mds_user_clear in the old build") {
		t.Errorf("symbol in neither: %v", err)
	}
	if _, err := SourcePatch(bg, bg, PatchRoot{Kind: Removed, Symbol: "counter2"}, src); err == nil || !strings.Contains(err.Error(), "not removed") {
		t.Errorf("symbol in both: %v", err)
	}
}
