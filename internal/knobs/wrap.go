package knobs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
)

// Wrapper folders: the c and kernel presets reach builds that ignore
// CFLAGS and EXTRA_OBJS the way ccache's masquerade mode does. A variant
// puts a folder first on PATH whose compilers (cc, gcc, clang, c++, g++,
// clang++, versioned and native-triplet names) or linkers (ld, for the
// kernel preset) are links to one POSIX sh script (wrapScript) that runs
// the real tool with the variant's flags and, at the link of one of the
// job's artifacts, its padding first. docs/knobs.md says what they touch.

// Environment variables of the wrappers.
const (
	// EnvArtifacts is the list of the job's artifacts as absolute physical
	// paths, one a line, that package build gives every build: the
	// wrappers pad only the links whose output is one of them. Its name is
	// build.EnvArtifacts too.
	EnvArtifacts = "PERFBOT_ARTIFACTS"
	// EnvBuildDir is the build's folder as an absolute physical path, also
	// set by package build (build.EnvBuildDir): the compiler wrappers pad a
	// link of an artifact's name inside it too.
	EnvBuildDir = "PERFBOT_BUILD_DIR"
	// EnvWrap is the wrapper folder a variant puts first on PATH (for
	// reading; the wrappers do not need it).
	EnvWrap = "PERFBOT_WRAP"
	// WrapLogPrefix starts every line a wrapper prints to the build log.
	WrapLogPrefix = "perfbot-wrap: "
)

// wrapMode says what a wrapper folder wraps.
type wrapMode string

const (
	// wrapCC wraps compiler drivers: flags everywhere, the padding
	// assembler file as the first input of an artifact's link.
	wrapCC wrapMode = "cc"
	// wrapLD wraps ld: the padding, assembled, as the first input of an
	// artifact's link (no flags: the kernel preset aligns with KCFLAGS).
	wrapLD wrapMode = "ld"
)

// wrapSpec is what one variant's wrappers add.
type wrapSpec struct {
	variant string   // the variant's name, for the log line
	mode    wrapMode // cc or ld
	flags   string   // compiler flags to add (cc mode)
	pad     string   // padding assembler file, "" for none
	links   []string // extra link outputs to pad: sh patterns on the absolute path
}

// ccNames matches the compiler drivers the c preset wraps: the plain names,
// versioned ones (gcc-12, clang++-16) and the native target triplet's
// (x86_64-linux-gnu-gcc-12). Cross compilers are left alone: the padding
// is assembler source for the native target.
var ccNames = regexp.MustCompile(`^(` + regexp.QuoteMeta(nativeArch()) + `-[a-z0-9_]+(-[a-z0-9_]+)?-)?(cc|c\+\+|gcc|g\+\+|clang|clang\+\+)(-[0-9]+(\.[0-9]+)*)?$`)

// ldNames matches the linkers the kernel preset wraps (Kbuild's $(LD) is
// ld, ld.lld with LLVM=1).
var ldNames = regexp.MustCompile(`^ld(\.bfd|\.gold|\.lld)?$`)

// nativeArch is the first word of the native GNU target triplet.
func nativeArch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "386":
		return "i686"
	}
	return runtime.GOARCH
}

// findTools returns the names on PATH that match re, sorted, leaving out
// folders under skip (the knobs folder, which holds older wrappers).
func findTools(re *regexp.Regexp, skip string) []string {
	seen := map[string]bool{}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if d == "" {
			d = "."
		}
		if abs, err := filepath.Abs(d); err == nil && skip != "" && strings.HasPrefix(abs+"/", strings.TrimSuffix(skip, "/")+"/") {
			continue
		}
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !re.MatchString(e.Name()) || seen[e.Name()] {
				continue
			}
			if fi, err := os.Stat(filepath.Join(d, e.Name())); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				seen[e.Name()] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// shQuote quotes s for the shell, in single quotes.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// script returns the wrapper script for spec, living in folder dir.
func (s wrapSpec) script(dir string) string {
	r := strings.NewReplacer(
		"@DIR@", shQuote(dir),
		"@VARIANT@", shQuote(s.variant),
		"@MODE@", shQuote(string(s.mode)),
		"@FLAGS@", shQuote(s.flags),
		"@PAD@", shQuote(s.pad),
		"@LINKS@", shQuote(strings.Join(s.links, "\n")),
	)
	return r.Replace(wrapScript)
}

// wrapScriptName is the script's own name in a wrapper folder; every tool
// name is a symbolic link to it.
const wrapScriptName = ".perfbot-wrap"

// writeWrapDir writes the wrapper folder of spec for the tools under dir
// (unless it is there already) and returns its absolute path. The folder
// is named by a hash of the script (without its own path) and the tool
// names, so the same settings always give the same path, and a changed
// wrapper another path, hence another build key (package build hashes the
// variant's PATH).
func writeWrapDir(dir string, spec wrapSpec, tools []string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("knobs: no folder to write the wrappers of %s into", spec.variant)
	}
	if len(tools) == 0 {
		return "", fmt.Errorf("knobs: %s: none of the tools to wrap is on PATH (%s)", spec.variant, map[wrapMode]string{wrapCC: "cc, gcc, clang, ...", wrapLD: "ld"}[spec.mode])
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("knobs: %v", err)
	}
	if strings.ContainsAny(abs, ":$\n") {
		return "", fmt.Errorf("knobs: knobs folder %q holds ':', '$' or a newline, which PATH cannot carry; use another folder", abs)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", spec.script("@DIR@"), strings.Join(tools, "\n"))
	path := filepath.Join(abs, "wrap-"+fileSafe(spec.variant)+"-"+hex.EncodeToString(h.Sum(nil)[:4]))
	content := spec.script(path)
	if wrapDirOK(path, content, tools) {
		return path, nil
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("knobs: %v", err)
	}
	tmp, err := os.MkdirTemp(abs, ".tmp-wrap-")
	if err != nil {
		return "", fmt.Errorf("knobs: %v", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("knobs: %v", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, wrapScriptName), []byte(content), 0o755); err != nil {
		return "", fmt.Errorf("knobs: writing wrappers: %v", err)
	}
	for _, t := range tools {
		if err := os.Symlink(wrapScriptName, filepath.Join(tmp, t)); err != nil {
			return "", fmt.Errorf("knobs: writing wrappers: %v", err)
		}
	}
	// A damaged folder is replaced; one another perfbot just wrote wins.
	if err := os.Rename(tmp, path); err != nil {
		if wrapDirOK(path, content, tools) {
			return path, nil
		}
		if err := os.RemoveAll(path); err != nil {
			return "", fmt.Errorf("knobs: replacing %s: %v", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return "", fmt.Errorf("knobs: writing %s: %v", path, err)
		}
	}
	return path, nil
}

// wrapDirOK reports whether path holds the wrapper script content and a
// link to it for every tool.
func wrapDirOK(path, content string, tools []string) bool {
	old, err := os.ReadFile(filepath.Join(path, wrapScriptName))
	if err != nil || string(old) != content {
		return false
	}
	for _, t := range tools {
		if l, err := os.Readlink(filepath.Join(path, t)); err != nil || l != wrapScriptName {
			return false
		}
	}
	return true
}

// wrapEnv adds to env the variables of a variant whose build runs with the
// wrapper folder wdir first on PATH.
func wrapEnv(env map[string]string, wdir string) map[string]string {
	env["PATH"] = wdir + ":${PATH}"
	env[EnvWrap] = wdir
	return env
}
