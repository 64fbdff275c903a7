package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// StrictEnv is the environment variable that makes [NeedTool] fail instead
// of skip for a tool CI installs.
const StrictEnv = "PERFBOT_TEST_STRICT"

// Strict reports whether PERFBOT_TEST_STRICT is set (to anything but "" or
// "0").
func Strict() bool {
	v := os.Getenv(StrictEnv)
	return v != "" && v != "0"
}

// tool is what the tests know of a command they run.
type tool struct {
	// pkg is the Debian package that provides the command (or, for go,
	// where CI gets it).
	pkg string
	// ci is true when .ci/run installs pkg: the tool is then required in
	// strict mode.
	ci bool
}

// tools lists every command a test may ask for. Keep it in step with the
// packages .ci/run installs (TestToolsMatchCI checks that).
var tools = map[string]tool{
	"gcc":  {"build-essential", true},
	"cc":   {"build-essential", true},
	"make": {"build-essential", true},
	"git":  {"git", true},
	// The CI recipes' scripts (examples/ci) post reports with curl and jq.
	"curl":               {"curl", true},
	"jq":                 {"jq", true},
	"nm":                 {"binutils", true},
	"objdump":            {"binutils", true},
	"perf":               {"linux-perf", true},
	"valgrind":           {"valgrind", true},
	"callgrind_annotate": {"valgrind", true},
	// The layout knobs' wrappers are checked under CMake and behind or
	// before ccache (internal/knobs).
	"cmake":  {"cmake", true},
	"ccache": {"ccache", true},
	// Essential Debian packages, on every Debian system.
	"sh":      {"dash", true},
	"setarch": {"util-linux", true},
	// The Go toolchain runs the tests; .ci/run puts /usr/local/go/bin
	// on PATH.
	"go": {"the Go toolchain, /usr/local/go/bin on PATH", true},
	// The suites' programs (internal/suite runs each of them briefly).
	"g++":             {"build-essential", true},
	"stress-ng":       {"stress-ng", true},
	"hackbench":       {"rt-tests", true},
	"fio":             {"fio", true},
	"sysbench":        {"sysbench", true},
	"hyperfine":       {"hyperfine", true},
	"redis-server":    {"redis-server", true},
	"redis-benchmark": {"redis-tools", true},
	// Google Benchmark's header and library, for a benchmark built with g++.
	"benchmark.h": {"libbenchmark-dev", true},
	// pytest with the pytest-benchmark plugin (NeedTool checks for both).
	"pytest": {"python3-pytest-benchmark", true},
	// PostgreSQL's server programs (initdb and postgres, off PATH in
	// Debian's package), for the store's and the fleet's tests.
	"postgres": {"postgresql", true},
	// Headless Chromium, driven by chromedp in the dashboard's browser
	// tests (internal/dashboard).
	"chromium": {"chromium", true},
	// A real Linux kernel build (internal/layout's tinyconfig test): the
	// source tree Debian ships as a tarball, the tools kbuild runs, and
	// libelf's headers for objtool; libssl's for the defconfig benchmark
	// (docs/kernel.md).
	"linux-source-6.1": {"linux-source-6.1", true},
	"flex":             {"flex", true},
	"bison":            {"bison", true},
	"bc":               {"bc", true},
	"gelf.h":           {"libelf-dev", true},
	"openssl/ssl.h":    {"libssl-dev", true},
	// Not installed by .ci/run: tests that need them skip.
	"cargo": {"cargo", false},
	"rustc": {"rustc", false},
}

// NeedTool skips the test unless every named command is on PATH (two are
// checked otherwise: benchmark.h by its header file, pytest with its
// pytest-benchmark plugin). In strict
// mode (PERFBOT_TEST_STRICT=1) a missing command that CI installs fails the
// test, naming the command and its Debian package; one that CI does not
// install still skips. A name testutil does not know fails the test: add
// it to the table in tools.go (and to .ci/run if CI should install it).
func NeedTool(tb testing.TB, names ...string) {
	tb.Helper()
	for _, name := range names {
		tl, known := tools[name]
		if !known {
			tb.Fatalf("testutil.NeedTool: unknown tool %q: add it to the table in internal/testutil/tools.go (and to .ci/run if CI should install it)", name)
		}
		var err error
		if present := presence[name]; present != nil {
			err = present()
		} else {
			_, err = exec.LookPath(name)
		}
		if err == nil {
			continue
		}
		switch {
		case !tl.ci:
			tb.Skipf("skipping: %s is not installed (Debian package %s; CI does not install it): %v", name, tl.pkg, err)
		case Strict():
			tb.Fatalf("%s is not installed (Debian package %s), and %s=1: CI installs it, so a missing %s is a failure, not a skip: %v",
				name, tl.pkg, StrictEnv, name, err)
		default:
			tb.Skipf("skipping: %s is not installed (Debian package %s): %v", name, tl.pkg, err)
		}
	}
}

// SkipIncapable skips the test because the machine cannot do what it needs
// although the tools are installed: hardware counters perf cannot read,
// perf_event_paranoid forbidding perf record, a single CPU to pin to, a
// sandbox that refuses setarch -R. It skips in strict mode too; format and
// args say what is missing, for the test log.
func SkipIncapable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	tb.Skipf("skipping: this machine cannot run the test (a capability, not a missing tool): "+format, args...)
}

// presence says whether the tools that are not commands on PATH are there.
var presence = map[string]func() error{
	"benchmark.h":      fileExists("/usr/include/benchmark/benchmark.h"),
	"linux-source-6.1": fileExists("/usr/src/linux-source-6.1.tar.xz"),
	"gelf.h":           fileExists("/usr/include/gelf.h"),
	"openssl/ssl.h":    fileExists("/usr/include/openssl/ssl.h"),
	"pytest":           pytestBenchmark,
	"postgres":         postgresPresent,
}

// fileExists is a presence check for a file (a header).
func fileExists(path string) func() error {
	return func() error {
		_, err := os.Stat(path)
		return err
	}
}

// pytestBenchmark checks for pytest with the pytest-benchmark plugin.
func pytestBenchmark() error {
	out, err := exec.Command("pytest", "--help").Output()
	if err != nil {
		return err
	}
	if !bytes.Contains(out, []byte("--benchmark-json")) {
		return os.ErrNotExist
	}
	return nil
}
