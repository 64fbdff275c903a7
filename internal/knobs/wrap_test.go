package knobs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// These tests build projects whose builds honour neither CFLAGS nor
// EXTRA_OBJS (the compilers and flags are hard-coded, the link lines name
// only the projects' own objects) and check, by reading the binaries back
// with package layout, that the c preset's wrappers still reach them, and
// only the job's artifacts.

// wrapSources are cProgram's sources (kern.c: kernel, table in .bss,
// counts in .data, weights in .rodata; main.c: run, main) and a helper for
// shared libraries and probes.
func wrapSources() map[string]string {
	return map[string]string{
		"kern.c":   cProgram["kern.c"],
		"main.c":   cProgram["main.c"],
		"helper.c": "int helper(int x) { return x * 3; }\nint helper_table[64];\n",
	}
}

// kernFlags keep kern.c's objects in source order at their ABI alignment
// (at most 16 bytes), so that a 32-byte padding moves each by 32.
const kernFlags = "-fno-toplevel-reorder -malign-data=abi"

// hardMakefile is case (a): gcc and its flags hard-coded, the link naming
// its own objects only.
const hardMakefile = "prog: kern.o main.o\n\tgcc -o prog kern.o main.o\n" +
	"kern.o: kern.c\n\tgcc -O2 " + kernFlags + " -c kern.c\n" +
	"main.o: main.c\n\tgcc -O2 -c main.c\n"

// knobBuild builds one variant and returns the artifact's layout and the
// build log.
type knobBuild func(t *testing.T, v job.Variant) (*layout.Binary, []byte)

// checkWrapped builds the plain build, the forced alignment and text,
// data and joint layout 2 (32 bytes) with bin, and checks what each knob
// did to the artifact: the hot function kernel (and main) on a 64-byte
// line; the program's code, or its .bss and .rodata objects, moved by 32
// bytes, and nothing else; one wrapper log line per artifact link, which
// CheckWrapped accepts. It returns the variants it built, plain first.
func checkWrapped(t *testing.T, p Preset, bin knobBuild, artifact string) []job.Variant {
	t.Helper()
	plain, plainLog := bin(t, job.Variant{})
	if links := WrappedLinks(plainLog); len(links) != 0 {
		t.Errorf("plain build: wrapper lines %+v, want none", links)
	}
	al := p.ForcedAlignment()
	alBin, alLog := bin(t, al)
	for _, name := range []string{"kernel", "main"} {
		if off := sym(t, alBin, name).Off(64); off != 0 {
			t.Errorf("%s: %s at %d mod 64, want 0", al.Name, name, off)
		}
	}
	checkLog(t, al, alLog, artifact, false)
	text, data, joint := p.TextLayouts(3)[2], p.DataLayouts(3)[2], p.Layouts(3)[2]
	for _, tc := range []struct {
		v          job.Variant
		code, objs int64
	}{{text, 32, 0}, {data, 0, 32}, {joint, 32, 32}} {
		b, log := bin(t, tc.v)
		for _, s := range []struct {
			name string
			want int64
		}{{"kernel", tc.code}, {"run", tc.code}, {"main", tc.code}, {"table", tc.objs}, {"weights", tc.objs}, {"counts", 0}} {
			if got := shift(t, plain, b, s.name); got != s.want {
				t.Errorf("%s: %s moved %+d bytes, want %+d", tc.v.Name, s.name, got, s.want)
			}
		}
		checkLog(t, tc.v, log, artifact, true)
	}
	return []job.Variant{{}, al, text, data, joint}
}

// checkLog checks that the build log of v has exactly one wrapper line, for
// the link of artifact, padded or flagged as v asks.
func checkLog(t *testing.T, v job.Variant, log []byte, artifact string, padded bool) {
	t.Helper()
	links := WrappedLinks(log)
	if len(links) != 1 || !sameArtifact(artifact, links[0].Output) || links[0].Padded != padded || (links[0].Flags != "") == padded {
		t.Errorf("%s: wrapper lines %+v, want one for %s (padded %v)\n%s", v.Name, links, artifact, padded, log)
	}
	if err := CheckWrapped(v, log, []string{artifact}); err != nil {
		t.Errorf("CheckWrapped: %v", err)
	}
}

// gitBuilder commits files to a scratch repository and returns a function
// that builds a variant of job j through package build, as perfbot does.
func gitBuilder(t *testing.T, files map[string]string, j *job.Job) knobBuild {
	t.Helper()
	g := testutil.NewGitRepo(t)
	g.Commit("project", files)
	ctx := context.Background()
	repo, err := gitrev.Open(ctx, g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.Resolve(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(g.Dir), ".perfbot")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := &build.Builder{Repo: repo, Store: st, Dir: dir}
	return func(t *testing.T, v job.Variant) (*layout.Binary, []byte) {
		t.Helper()
		r, err := b.Build(ctx, j, c, v)
		if err != nil {
			t.Fatalf("build of %s: %v", v.Name, err)
		}
		log, err := os.ReadFile(r.Record.LogPath)
		if err != nil {
			t.Fatal(err)
		}
		return open(t, filepath.Join(r.Record.ArtifactDir, j.Build.Artifacts[0])), log
	}
}

// TestWrapHardcodedMakefile is case (a): a Makefile that hard-codes
// "gcc -O2 -c" and "gcc -o prog kern.o main.o", built through package
// build (which gives the build PERFBOT_ARTIFACTS).
func TestWrapHardcodedMakefile(t *testing.T) {
	testutil.NeedTool(t, "gcc", "make", "git")
	files := wrapSources()
	files["Makefile"] = hardMakefile
	j := &job.Job{Build: job.Build{Command: "make", Artifacts: []string{"prog"}, Timeout: 120e9}}
	p := cPresetIn(t)
	vs := checkWrapped(t, p, gitBuilder(t, files, j), "prog")
	// The wrapper folder is part of each variant's PATH, so of its key.
	seen := map[string]string{}
	for _, v := range vs {
		k := build.Key(j, strings.Repeat("0", 40), v)
		if other, dup := seen[k]; dup {
			t.Errorf("variants %q and %q have the same build key", v.Name, other)
		}
		seen[k] = v.Name
	}
}

// TestWrapShellScript is case (b): a build.sh that calls cc, in a project
// folder, a knobs folder and an artifact folder whose names hold spaces.
func TestWrapShellScript(t *testing.T) {
	testutil.NeedTool(t, "cc", "sh")
	p, err := LookupIn("c", filepath.Join(t.TempDir(), "knobs dir"))
	if err != nil {
		t.Fatal(err)
	}
	files := wrapSources()
	files["build.sh"] = `set -e
cc -O2 ` + kernFlags + ` -c -o kern.o kern.c
cc -O2 -c -o main.o main.c
mkdir -p "bin dir"
cc -o "bin dir/prog" kern.o main.o
`
	const artifact = "bin dir/prog"
	bin := func(t *testing.T, v job.Variant) (*layout.Binary, []byte) {
		dir := filepath.Join(t.TempDir(), "my project")
		log := buildAt(t, dir, files, "sh build.sh", nil, v, artifact)
		return open(t, filepath.Join(dir, artifact)), log
	}
	checkWrapped(t, p, bin, artifact)
}

// probeBuild is case (d): a configure-like script whose probes link a
// conftest, and an a.out and a program called prog in a scratch folder
// outside the build's (kept as probe/a.out and probe/prog), and two
// shared libraries, before the build links the artifact prog.
const probeBuild = `set -e
printf 'int main(void) { return 0; }\n' > conftest.c
cc -o conftest conftest.c
./conftest
here=$(pwd)
scratch=$(mktemp -d)
(cd "$scratch" && cc "$here/conftest.c" && cc -o prog "$here/conftest.c")
mkdir -p probe
cp "$scratch/a.out" "$scratch/prog" probe/
rm -rf "$scratch"
cc -fPIC -shared -o libhelper.so helper.c
cc -fPIC -c -o helper.o helper.c
cc -Wl,-soname,libhelper2.so,-shared -o libhelper2.so helper.o
cc -O2 ` + kernFlags + ` -c -o kern.o kern.c
cc -O2 -c -o main.o main.c
cc -o prog kern.o main.o
`

// probeOutputs are the links of probeBuild that must never be padded.
var probeOutputs = []string{"conftest", "probe/a.out", "probe/prog", "libhelper.so", "libhelper2.so"}

// TestWrapProbesAndSharedLibraries is case (d): only the artifact is
// padded; the probes and shared libraries of a padded build are
// byte-identical to the plain build's and hold no padding symbol.
func TestWrapProbesAndSharedLibraries(t *testing.T) {
	testutil.NeedTool(t, "cc", "sh")
	p := cPresetIn(t)
	dirs := map[string]string{}
	bin := func(t *testing.T, v job.Variant) (*layout.Binary, []byte) {
		dir := t.TempDir()
		log := buildAt(t, dir, wrapSources(), probeBuild, nil, v, "prog")
		dirs[v.Name] = dir
		return open(t, filepath.Join(dir, "prog")), log
	}
	vs := checkWrapped(t, p, bin, "prog")
	for _, v := range vs[1:] {
		for _, f := range probeOutputs {
			b := open(t, filepath.Join(dirs[v.Name], f))
			for _, s := range b.Symbols {
				if strings.HasPrefix(s.Name, "perfbot_pad") {
					t.Errorf("%s: %s holds padding symbol %s", v.Name, f, s.Name)
				}
			}
			if v.Name == AlignName {
				continue // the flags reach every compile, probes too
			}
			plain, err1 := os.ReadFile(filepath.Join(dirs[""], f))
			padded, err2 := os.ReadFile(filepath.Join(dirs[v.Name], f))
			if err1 != nil || err2 != nil || string(plain) != string(padded) {
				t.Errorf("%s: %s differs from the plain build's (%v, %v)", v.Name, f, err1, err2)
			}
		}
	}
}

// TestWrapKeepsMakefileDefaults: no knob sets CFLAGS, which would replace a
// Makefile's "CFLAGS ?= -O3" (zstd, xxHash and lz4 say so) and build the
// forced-alignment variant unoptimized.
func TestWrapKeepsMakefileDefaults(t *testing.T) {
	testutil.NeedTool(t, "cc", "make")
	p := cPresetIn(t)
	files := map[string]string{
		"Makefile": "CFLAGS ?= -O2 -DDEFAULTS_KEPT\nprog: prog.c\n\t$(CC) $(CFLAGS) -o prog prog.c\n",
		"prog.c":   "#ifndef DEFAULTS_KEPT\n#error the Makefile's default CFLAGS were replaced\n#endif\nint main(void) { return 0; }\n",
	}
	for _, v := range []job.Variant{p.ForcedAlignment(), p.TextLayouts(2)[1], p.DataLayouts(2)[1], p.Layouts(2)[1]} {
		log := buildAt(t, t.TempDir(), files, "make", nil, v, "prog")
		if len(WrappedLinks(log)) != 1 {
			t.Errorf("%s: want one wrapper line:\n%s", v.Name, log)
		}
	}
}

// TestWrapCopiedArtifact: a build that links the artifact in another
// folder of the build and copies it into place, as zstd's programs/Makefile
// does (obj/conf_<hash>/zstd, then cp), is padded: the link's output has
// the artifact's name and lies in the build's folder. The log line says
// "(by name)".
func TestWrapCopiedArtifact(t *testing.T) {
	testutil.NeedTool(t, "cc", "make")
	p := cPresetIn(t)
	files := wrapSources()
	files["Makefile"] = "prog: obj/conf_1/prog\n\tcp -f obj/conf_1/prog prog\n" +
		"obj/conf_1/prog: kern.c main.c\n\tmkdir -p obj/conf_1\n\tcc -O2 " + kernFlags + " -o obj/conf_1/prog kern.c main.c\n"
	plainDir, textDir := t.TempDir(), t.TempDir()
	buildAt(t, plainDir, files, "make -s", nil, job.Variant{}, "prog")
	v := p.TextLayouts(3)[2]
	log := buildAt(t, textDir, files, "make -s", nil, v, "prog")
	if got := shift(t, open(t, filepath.Join(plainDir, "prog")), open(t, filepath.Join(textDir, "prog")), "kernel"); got != 32 {
		t.Errorf("kernel moved %+d, want +32\n%s", got, log)
	}
	if links := WrappedLinks(log); len(links) != 1 || !links[0].ByName || links[0].Output != "obj/conf_1/prog" {
		t.Errorf("wrapper lines %+v, want one for obj/conf_1/prog, by name\n%s", links, log)
	}
	if err := CheckWrapped(v, log, []string{"prog"}); err != nil {
		t.Error(err)
	}
}
