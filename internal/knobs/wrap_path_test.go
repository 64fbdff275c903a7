package knobs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/testutil"
)

// cmakeLists is case (c): a CMake project with a configure probe
// (check_c_source_compiles links a cmTC_* program), a shared library and
// the executable prog, built in build/.
const cmakeLists = `cmake_minimum_required(VERSION 3.13)
project(wrapbench C)
include(CheckCSourceCompiles)
check_c_source_compiles("int main(void) { return 0; }" HAVE_TRIVIAL_MAIN)
add_library(helper SHARED helper.c)
add_executable(prog kern.c main.c)
set_source_files_properties(kern.c PROPERTIES COMPILE_OPTIONS "-fno-toplevel-reorder;-malign-data=abi")
`

// TestWrapCMake is case (c): CMake finds the wrapped cc on PATH; its
// compiler checks and try_compile probes are not padded, nor is the shared
// library, and the executable is.
func TestWrapCMake(t *testing.T) {
	testutil.NeedTool(t, "cmake", "make", "cc")
	p := cPresetIn(t)
	files := wrapSources()
	files["CMakeLists.txt"] = cmakeLists
	const command = "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build"
	const artifact = "build/prog"
	dirs := map[string]string{}
	bin := func(t *testing.T, v job.Variant) (*layout.Binary, []byte) {
		dir := t.TempDir()
		log := buildAt(t, dir, files, command, nil, v, artifact)
		dirs[v.Name] = dir
		return open(t, filepath.Join(dir, artifact)), log
	}
	vs := checkWrapped(t, p, bin, artifact)
	for _, v := range vs[1:] {
		cache, err := os.ReadFile(filepath.Join(dirs[v.Name], "build", "CMakeCache.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(cache), "CMAKE_C_COMPILER:") || !strings.Contains(string(cache), v.Env[EnvWrap]) {
			t.Errorf("%s: CMake did not take the wrapped compiler from %s", v.Name, v.Env[EnvWrap])
		}
		so := open(t, filepath.Join(dirs[v.Name], "build", "libhelper.so"))
		for _, s := range so.Symbols {
			if strings.HasPrefix(s.Name, "perfbot_pad") {
				t.Errorf("%s: libhelper.so holds padding symbol %s", v.Name, s.Name)
			}
		}
	}
}

// TestWrapPATH: the wrapper finds the real compiler, and pads once, when
// its folder is on PATH twice, under a second name (a symbolic link), with
// a ccache masquerade folder behind it, and below ccache (CC="ccache
// gcc"). A padding added twice would fail the link (its symbols are
// global), and so would a wrapper that calls itself.
func TestWrapPATH(t *testing.T) {
	testutil.NeedTool(t, "gcc", "ccache")
	p := cPresetIn(t)
	v := p.TextLayouts(3)[2]
	wdir := v.Env[EnvWrap]
	scratch := t.TempDir()
	alias := filepath.Join(scratch, "alias")
	if err := os.Symlink(wdir, alias); err != nil {
		t.Fatal(err)
	}
	ccache, err := exec.LookPath("ccache")
	if err != nil {
		t.Fatal(err)
	}
	masq := filepath.Join(scratch, "ccache-bin")
	if err := os.MkdirAll(masq, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"gcc", "cc"} {
		if err := os.Symlink(ccache, filepath.Join(masq, n)); err != nil {
			t.Fatal(err)
		}
	}
	path := os.Getenv("PATH")
	const link = " -O2 -c kern.c && gcc -O2 -c main.c && gcc -o prog kern.o main.o"
	plain := open(t, filepath.Join(buildIn(t, wrapSources(), "gcc"+link, nil, job.Variant{}), "prog"))
	for _, tc := range []struct{ name, path, command string }{
		{"twice", wdir + ":" + path, "gcc" + link},
		{"alias", alias + ":" + path, "gcc" + link},
		{"ccache masquerade", masq + ":" + path, "gcc" + link},
		{"under ccache", path, "ccache gcc" + link},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"PATH": tc.path, "CCACHE_DIR": filepath.Join(t.TempDir(), "ccache")}
			dir := t.TempDir()
			log := buildAt(t, dir, wrapSources(), tc.command, env, v, "prog")
			if got := shift(t, plain, open(t, filepath.Join(dir, "prog")), "kernel"); got != 32 {
				t.Errorf("kernel moved %+d, want +32\n%s", got, log)
			}
			if n := len(WrappedLinks(log)); n != 1 {
				t.Errorf("%d wrapper lines, want 1:\n%s", n, log)
			}
			if strings.Contains(tc.name, "ccache") {
				if _, err := os.Stat(env["CCACHE_DIR"]); err != nil {
					t.Errorf("ccache did not run: %v", err)
				}
			}
		})
	}
}

// TestWrapPassesArguments: every argument reaches the compiler unchanged
// (spaces, quotes, a glob, a dollar sign, a backslash, an empty macro
// value), queries such as
// --version pass through without flags or log lines, and a tool missing
// from PATH fails like a missing command.
func TestWrapPassesArguments(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	p := cPresetIn(t)
	v := p.ForcedAlignment()
	files := map[string]string{"hello.c": "#include <stdio.h>\nint main(void) { puts(MSG); return 0; }\n"}
	dir := t.TempDir()
	log := buildAt(t, dir, files, `gcc -DMSG='"a  b * $HOME \\ '"'"'q'"'"'"' -DEMPTY= -o hello hello.c`, nil, v, "hello")
	out, err := exec.Command(filepath.Join(dir, "hello")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "a  b * $HOME \\ 'q'\n"; got != want {
		t.Errorf("the program printed %q, want %q: an argument changed on its way", got, want)
	}
	if links := WrappedLinks(log); len(links) != 1 || links[0].Flags != alignFlags {
		t.Errorf("wrapper lines %+v, want one with the flags %q", links, alignFlags)
	}
	wrapped := filepath.Join(v.Env[EnvWrap], "gcc")
	cmd := exec.Command(wrapped, "--version")
	cmd.Env = append(os.Environ(), "PATH="+v.Env[EnvWrap]+":"+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), WrapLogPrefix) || !strings.Contains(string(out), "gcc") {
		t.Errorf("gcc --version through the wrapper: %v\n%s", err, out)
	}
	cmd = exec.Command(wrapped, "--version")
	cmd.Env = append(os.Environ(), "PATH="+v.Env[EnvWrap])
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 127 || !strings.Contains(string(out), "not found on PATH") {
		t.Errorf("wrapper with no gcc on PATH: %v\n%s; want exit status 127 and a message", err, out)
	}
}

// TestWrapDirContentAddressed: the same settings give the same folder, other
// settings another one, and a damaged folder is repaired.
func TestWrapDirContentAddressed(t *testing.T) {
	dir := t.TempDir()
	tools := []string{"cc", "gcc"}
	spec := wrapSpec{variant: "x", mode: wrapCC, flags: "-falign-functions=64"}
	a, err := writeWrapDir(dir, spec, tools)
	if err != nil {
		t.Fatal(err)
	}
	b, err := writeWrapDir(dir, spec, tools)
	if err != nil || a != b {
		t.Fatalf("same settings: %s and %s (%v), want one folder", a, b, err)
	}
	spec.flags = "-falign-functions=32"
	if c, err := writeWrapDir(dir, spec, tools); err != nil || c == a {
		t.Errorf("other flags: %s (%v), want another folder than %s", c, err, a)
	}
	if c, err := writeWrapDir(dir, wrapSpec{variant: "x", mode: wrapCC, flags: "-falign-functions=64"}, []string{"cc"}); err != nil || c == a {
		t.Errorf("other tools: %s (%v), want another folder than %s", c, err, a)
	}
	if err := os.Remove(filepath.Join(a, "gcc")); err != nil {
		t.Fatal(err)
	}
	spec.flags = "-falign-functions=64"
	if c, err := writeWrapDir(dir, spec, tools); err != nil || c != a || !wrapDirOK(a, spec.script(a), tools) {
		t.Errorf("damaged folder not repaired: %s, %v", c, err)
	}
	if _, err := writeWrapDir(filepath.Join(dir, "a:b"), spec, tools); err == nil {
		t.Errorf("a knobs folder with ':' (which PATH cannot carry) was accepted")
	}
}

// TestWrapEnvNames: the wrappers read the variables package build sets.
func TestWrapEnvNames(t *testing.T) {
	if EnvArtifacts != build.EnvArtifacts || EnvBuildDir != build.EnvBuildDir {
		t.Errorf("knobs reads %s and %s, build sets %s and %s", EnvArtifacts, EnvBuildDir, build.EnvArtifacts, build.EnvBuildDir)
	}
	if !strings.Contains(wrapScript, "${"+EnvArtifacts+"-}") || !strings.Contains(wrapScript, "${"+EnvBuildDir+"-}") {
		t.Errorf("the wrapper script does not read %s and %s", EnvArtifacts, EnvBuildDir)
	}
}
