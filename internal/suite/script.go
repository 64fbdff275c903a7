package suite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// script builds a suite's run command: a POSIX sh script, one line at a
// time, that first checks every program it runs.
type script struct {
	suite    string
	lines    []string
	programs []Program
}

func newScript(suite string) *script { return &script{suite: suite} }

func (s *script) add(format string, args ...any) {
	s.lines = append(s.lines, fmt.Sprintf(format, args...))
}

// need checks that p can be run, first thing in the script, and records it
// for Use.Programs.
func (s *script) need(p Program) {
	s.programs = append(s.programs, p)
	s.lines = append(s.lines, fmt.Sprintf("command -v %s >/dev/null 2>&1 || { echo %s >&2; exit 127; }",
		quote(p.Command), quote(missingMsg(s.suite, p))))
}

// fail adds a check: when the shell test cond fails, the run fails with msg.
func (s *script) fail(cond, msg string) {
	s.add("%s || { echo %s >&2; exit 127; }", cond, quote("perfbot: suite "+s.suite+": "+msg))
}

// capture adds the lines that give the script a temporary file $out,
// removed on exit (with what the shell command cleanup removes), for a
// program to write its results into.
func (s *script) capture(cleanup string) {
	s.add(`out=$(mktemp "${TMPDIR:-/tmp}/perfbot-%s.XXXXXX")`, s.suite)
	if cleanup != "" {
		cleanup = "; " + cleanup
	}
	s.add(`trap 'rm -f "$out"%s' EXIT`, cleanup)
}

func (s *script) use(build string) *Use {
	return &Use{Command: strings.Join(s.lines, "\n") + "\n", Programs: s.programs, Build: build}
}

// missingMsg says that p is missing and what to do about it.
func missingMsg(suite string, p Program) string {
	switch {
	case !p.FromPATH():
		return fmt.Sprintf("perfbot: suite %s: %s is not an executable file in the worktree: the job's build.command should make it", suite, p.Command)
	case p.Package == "":
		return fmt.Sprintf("perfbot: suite %s: %s is not installed (not on PATH); the job's build makes it, or install it", suite, p.Command)
	}
	return fmt.Sprintf("perfbot: suite %s: %s is not installed (not on PATH): install the Debian package %s (apt-get install %s)",
		suite, p.Command, p.Package, p.Package)
}

// Missing reports the programs of u that are looked up on PATH and are not
// on path (a PATH value; the job's run.env may set its own), each with the
// Debian package to install. Programs the build makes (paths in the
// worktree) are not checked here: the run command checks them.
func (u *Use) Missing(path string) error {
	var errs []error
	for _, p := range u.Programs {
		if p.FromPATH() && !onPath(p.Command, path) {
			errs = append(errs, errors.New(strings.TrimPrefix(missingMsg(u.Suite, p), "perfbot: ")))
		}
	}
	return errors.Join(errs...)
}

// onPath reports whether an executable file name is in a directory of path.
func onPath(name, path string) bool {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		st, err := os.Stat(filepath.Join(dir, name))
		if err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

var safeWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// quote quotes v as one shell word: as it is when it needs no quoting,
// else in single quotes.
func quote(v string) string {
	if safeWord.MatchString(v) {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// flag is " NAME=VALUE" (quoted), or "" for an empty value.
func flag(name, v string) string {
	if v == "" {
		return ""
	}
	return " " + name + "=" + quote(v)
}

// args are extra arguments as the job writes them: shell words, spliced as
// they are (after a space), "" when there are none.
func args(v string) string {
	if strings.TrimSpace(v) == "" {
		return ""
	}
	return " " + v
}

// Option checks.

func count(min int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < min {
			return fmt.Errorf("want a whole number of at least %d, got %q", min, v)
		}
		return nil
	}
}

func oneOf(choices ...string) func(string) error {
	return func(v string) error {
		for _, c := range choices {
			if v == c {
				return nil
			}
		}
		return fmt.Errorf("want one of %s, got %q", strings.Join(choices, ", "), v)
	}
}

func matches(re *regexp.Regexp, what string) func(string) error {
	return func(v string) error {
		if !re.MatchString(v) {
			return fmt.Errorf("want %s, got %q", what, v)
		}
		return nil
	}
}

func required(what string) func(string) error {
	return func(v string) error {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("required: %s", what)
		}
		return nil
	}
}

// Values options take.
var (
	reName       = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	reSize       = regexp.MustCompile(`^[0-9]+(?:[kKmMgGtT][iI]?[bB]?)?$`)
	reTimeout    = regexp.MustCompile(`^$|^[0-9]+[smhdy]?$`)
	reOptSeconds = regexp.MustCompile(`^$|^[0-9]+$`)
	reOptFloat   = regexp.MustCompile(`^$|^[0-9]+(?:\.[0-9]+)?$`)
	reMinTime    = regexp.MustCompile(`^$|^[0-9]+(?:\.[0-9]+)?[sx]?$`)
)

// program is the common option naming a suite's program.
func program(name, pkg string) Option {
	return Option{Name: "program", Default: name, check: required("the program to run"),
		Doc: fmt.Sprintf("the %s to run: a name on PATH (Debian package %s) or a path in the worktree the build makes (./%s)", name, pkg, name)}
}

// extra is the common option of extra arguments.
func extra(to string) Option {
	return Option{Name: "args", Doc: "extra arguments for " + to + ", as shell words"}
}
