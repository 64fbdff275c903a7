package testutil

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// recorder is a testing.TB that records the first Skipf, Fatalf or Errorf
// instead of acting on it.
type recorder struct {
	testing.TB
	kind, msg string
}

func (r *recorder) Helper() {}

func (r *recorder) record(kind, format string, args ...any) {
	if r.kind == "" {
		r.kind, r.msg = kind, fmt.Sprintf(format, args...)
	}
}

func (r *recorder) Skipf(format string, args ...any)  { r.record("skip", format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.record("fatal", format, args...) }
func (r *recorder) Errorf(format string, args ...any) { r.record("error", format, args...) }

func TestNeedTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // nothing is installed
	for _, tc := range []struct {
		desc   string
		strict string
		tool   string
		kind   string
		want   []string
	}{
		{"a tool CI installs skips by default", "", "gcc", "skip", []string{"gcc", "build-essential"}},
		{"strict: a tool CI installs fails, naming its package", "1", "objdump", "fatal", []string{"objdump", "binutils", StrictEnv}},
		{"PERFBOT_TEST_STRICT=0 is not strict", "0", "perf", "skip", []string{"perf", "linux-perf"}},
		{"strict: a tool CI does not install still skips", "1", "cargo", "skip", []string{"cargo", "CI does not install it"}},
		{"a tool found by a probe, not on PATH (pytest and its plugin)", "", "pytest", "skip", []string{"pytest", "python3-pytest-benchmark"}},
		{"a tool testutil does not know is a mistake of the test", "", "no-such-tool", "fatal", []string{"unknown tool", "tools.go"}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Setenv(StrictEnv, tc.strict)
			r := &recorder{TB: t}
			NeedTool(r, tc.tool)
			if r.kind != tc.kind {
				t.Fatalf("NeedTool(%q): %s %q, want %s", tc.tool, r.kind, r.msg, tc.kind)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.msg, w) {
					t.Errorf("message %q lacks %q", r.msg, w)
				}
			}
		})
	}
}

func TestNeedToolPresent(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nm"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv(StrictEnv, "1")
	r := &recorder{TB: t}
	NeedTool(r, "nm")
	if r.kind != "" {
		t.Errorf("NeedTool(nm) with nm on PATH: %s %q", r.kind, r.msg)
	}
}

func TestSkipIncapableSkipsInStrictMode(t *testing.T) {
	t.Setenv(StrictEnv, "1")
	r := &recorder{TB: t}
	SkipIncapable(r, "perf_event_paranoid is %d", 3)
	if r.kind != "skip" || !strings.Contains(r.msg, "perf_event_paranoid is 3") {
		t.Errorf("SkipIncapable: %s %q, want a skip with the reason", r.kind, r.msg)
	}
}

// TestToolsMatchCI: every package the tool table says CI installs is one
// .ci/run installs (the essential packages and Go come with the image).
func TestToolsMatchCI(t *testing.T) {
	script, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for name, tl := range tools {
		switch {
		case !tl.ci, tl.pkg == "dash", tl.pkg == "util-linux", name == "go":
			continue
		}
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(tl.pkg) + `\b`).Match(script) {
			t.Errorf("%s: the table says CI installs Debian package %s, .ci/run does not name it", name, tl.pkg)
		}
		// A name may end in a character that is not a word's (g++).
		if !regexp.MustCompile(`(?:^|[^\w+])` + regexp.QuoteMeta(name) + `(?:[^\w+]|$)`).Match(script) {
			t.Errorf("%s: .ci/run does not check for it", name)
		}
	}
}

func TestGitRepo(t *testing.T) {
	r := NewGitRepo(t)
	first := r.Commit("first", map[string]string{"a.txt": "one\n", "sub/b.txt": "two\n"})
	second := r.Commit("second", map[string]string{"a.txt": "three\n"})
	hash := regexp.MustCompile(`^[0-9a-f]{40}$`)
	if !hash.MatchString(first) || !hash.MatchString(second) || first == second {
		t.Fatalf("hashes %q, %q: want two different full hashes", first, second)
	}
	if got := r.Git("rev-parse", "HEAD~1"); got != first {
		t.Errorf("HEAD~1 = %s, want the first commit %s", got, first)
	}
	if got := r.Git("show", first+":sub/b.txt"); got != "two" {
		t.Errorf("sub/b.txt at the first commit = %q, want two", got)
	}
	if got := r.Git("log", "-1", "--format=%s"); got != "second" {
		t.Errorf("subject %q, want second", got)
	}
	if got := r.Git("status", "--porcelain"); got != "" {
		t.Errorf("work tree not clean after Commit:\n%s", got)
	}
}

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testdata", "x.golden")

	*update = true
	t.Cleanup(func() { *update = false })
	Golden(t, path, []byte("v1\n"))
	*update = false
	if got, err := os.ReadFile(path); err != nil || string(got) != "v1\n" {
		t.Fatalf("-update wrote %q, %v; want v1", got, err)
	}

	Golden(t, path, []byte("v1\n"))
	r := &recorder{TB: t}
	Golden(r, path, []byte("v2\n"))
	if r.kind != "error" || !strings.Contains(r.msg, "go test -update") {
		t.Errorf("Golden with different output: %s %q, want an error that says how to update", r.kind, r.msg)
	}
	r = &recorder{TB: t}
	Golden(r, filepath.Join(t.TempDir(), "missing"), []byte("v1\n"))
	if r.kind != "fatal" {
		t.Errorf("Golden with no file: %s %q, want fatal", r.kind, r.msg)
	}
}

// TestDesignMaxCV: the design's noise limit, the figure its doc names.
func TestDesignMaxCV(t *testing.T) {
	if got := (Design{Effect: 30, Runs: 40, Confidence: 0.98}).MaxCV(); math.Abs(got-28.83) > 0.01 {
		t.Errorf("MaxCV = %.3f, want 28.83", got)
	}
	if got := CV([]float64{9, 10, 11}); math.Abs(got-10) > 1e-9 {
		t.Errorf("CV = %v, want 10", got)
	}
}

// TestSkipInconclusive: noise beyond the design skips, naming the CV and
// the limit; noise within it fails.
func TestSkipInconclusive(t *testing.T) {
	d := Design{Effect: 30, Runs: 40, Confidence: 0.98}
	for _, tc := range []struct {
		desc   string
		sample Sample
		kind   string
		want   []string
	}{
		{"noise beyond the design", Sample{"base", []float64{50, 100, 150, 80, 120}}, "skip", []string{"CV 38.1 %", "28.8 %", "base, 5 runs"}},
		{"noise within the design", Sample{"base", []float64{99, 100, 101}}, "fatal", []string{"CV 1.0 %", "28.8 %"}},
	} {
		r := &recorder{TB: t}
		SkipInconclusive(r, d, "case", tc.sample)
		if r.kind != tc.kind {
			t.Errorf("%s: %s %q, want %s", tc.desc, r.kind, r.msg, tc.kind)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.msg, w) {
				t.Errorf("%s: message %q lacks %q", tc.desc, r.msg, w)
			}
		}
	}
}
