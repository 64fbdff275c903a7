package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// TestSameLayout: gcc -g does not move a symbol (the check triage makes
// before it trusts a -g build's DWARF for a source patch); a removed
// global is named.
func TestSameLayout(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	src, out := t.TempDir(), t.TempDir()
	build := func(name string, data string, flags ...string) *Binary {
		for n, c := range map[string]string{"main.c": srcMain, "other.c": srcOther, "data.c": data} {
			if err := os.WriteFile(filepath.Join(src, n), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(out, name)
		runCmd(t, src, "gcc", append(flags, "-O2", "-o", p, "main.c", "data.c", "other.c")...)
		return mustOpen(t, p)
	}
	root := "mds_user_clear"
	plain := build("plain", version(bssData, false, root))
	debug := build("debug", version(bssData, false, root), "-g")
	if err := SameLayout(plain, debug); err != nil {
		t.Errorf("plain and -g builds: %v", err)
	}
	removed := build("removed", version(bssData, true, root))
	err := SameLayout(plain, removed)
	if err == nil || !strings.Contains(err.Error(), root+" only in the first") {
		t.Errorf("a removed global: %v; want an error naming %s", err, root)
	}
	t.Log(err)
}

// TestSameImage: a build with -g loads what the build without it loads
// (only its debug information and build ID differ); so does one built in
// another folder with -g; a removed global changes the image.
func TestSameImage(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	out := t.TempDir()
	build := func(name, dir string, remove bool, flags ...string) string {
		for n, c := range map[string]string{"main.c": srcMain, "other.c": srcOther, "data.c": version(bssData, remove, "mds_user_clear")} {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(out, name)
		runCmd(t, dir, "gcc", append(flags, "-O2", "-o", p, "main.c", "data.c", "other.c")...)
		return p
	}
	plain := build("plain", t.TempDir(), false)
	debug := build("debug", t.TempDir(), false, "-g")
	debug2 := build("debug2", t.TempDir(), false, "-g")
	removed := build("removed", t.TempDir(), true, "-g")
	for _, c := range []struct {
		a, b string
		want bool
	}{{plain, debug, true}, {debug, debug2, true}, {debug, removed, false}} {
		got, err := SameImage(c.a, c.b)
		if err != nil || got != c.want {
			t.Errorf("SameImage(%s, %s) = %v, %v; want %v", filepath.Base(c.a), filepath.Base(c.b), got, err, c.want)
		}
	}
	if a, b := readFile(t, debug), readFile(t, debug2); string(a) == string(b) {
		t.Error("the two -g builds in different folders are byte-identical: the case tests less than it should")
	}
	if _, err := SameImage(plain, filepath.Join(out, "missing")); err == nil {
		t.Error("a missing file: no error")
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSameImageNoSectionHeaders: two different programs whose section
// headers were stripped (e_shoff, e_shnum, e_shstrndx zeroed, as sstrip
// does) are not one image, though they have the same entry point; the
// same program stripped so is.
func TestSameImageNoSectionHeaders(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	build := func(name, ret string) string {
		// Each in a folder of its own, from prog.c: one source built
		// twice gives the same bytes (its GNU build ID included).
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "prog.c"), []byte("int main(void) { return "+ret+"; }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		runCmd(t, dir, "gcc", "-O2", "-o", name, "prog.c")
		b := readFile(t, p)
		// ELF64: e_shoff at 0x28 (8 bytes), e_shnum at 0x3c, e_shstrndx at 0x3e.
		for i := 0x28; i < 0x30; i++ {
			b[i] = 0
		}
		b[0x3c], b[0x3d], b[0x3e], b[0x3f] = 0, 0, 0, 0
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one, two, one2 := build("one", "1"), build("two", "2"), build("one2", "1")
	if got, err := SameImage(one, two); err != nil || got {
		t.Errorf("SameImage(return 1, return 2) without section headers = %v, %v; want false", got, err)
	}
	if got, err := SameImage(one, one2); err != nil || !got {
		t.Errorf("SameImage of one program built twice without section headers = %v, %v; want true", got, err)
	}
}
