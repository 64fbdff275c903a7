package profile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/perfbot/perfbot/internal/testutil"
)

// benchC has one dominant hot function, hot_spin; its argument sets the
// amount of work.
const benchC = `
#include <stdio.h>
#include <stdlib.h>
#define N 4096
unsigned a[N];
__attribute__((noinline)) unsigned long hot_spin(int reps) {
	unsigned long s = 0;
	for (int r = 0; r < reps; r++)
		for (int i = 0; i < N; i++) {
			unsigned v = a[i];
			int x = (i & 3) + 1;
			do { s += v; v >>= 1; } while (--x);
		}
	return s;
}
__attribute__((noinline)) void cold_setup(void) {
	for (int i = 0; i < N; i++) a[i] = i * 2654435761u;
}
int main(int argc, char **argv) {
	int reps = argc > 1 ? atoi(argv[1]) : 100;
	cold_setup();
	printf("%lu\n", hot_spin(reps));
	return 0;
}
`

// buildBench compiles benchC with gcc and returns the binary's path.
func buildBench(t *testing.T) string {
	t.Helper()
	testutil.NeedTool(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "bench.c")
	if err := os.WriteFile(src, []byte(benchC), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bench")
	if out, err := exec.Command("gcc", "-O2", "-fno-omit-frame-pointer", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// runTo runs a command and writes its standard output to file.
func runTo(t *testing.T, file string, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("%s: %v", name, err)
	}
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkSum checks the Hotness invariants: fractions in [0, 1] summing to at
// most 1.
func checkSum(t *testing.T, h *Hotness) {
	t.Helper()
	sum := 0.0
	for fn, f := range h.Funcs {
		if !(f > 0 && f <= 1) {
			t.Errorf("%s: fraction %v outside (0, 1]", fn, f)
		}
		sum += f
	}
	if sum > 1+1e-9 {
		t.Errorf("fractions sum to %v > 1", sum)
	}
}

func hottest(t *testing.T, h *Hotness, want string, min float64) {
	t.Helper()
	checkSum(t, h)
	top := h.Top(1)
	if len(top) != 1 || top[0].Name != want || top[0].Self < min {
		t.Errorf("%s: hottest = %+v; want %s with at least %.0f%% (top 5: %+v)", h.Source, top, want, min*100, h.Top(5))
	}
}

func TestPerfRecord(t *testing.T) {
	testutil.NeedTool(t, "perf")
	bin := buildBench(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "perf.data")
	rec := exec.Command("perf", "record", "-q", "-e", "cpu-clock", "-g", "-o", data, bin, "10000")
	if out, err := rec.CombinedOutput(); err != nil {
		// perf_event_paranoid, a container without perf events: the
		// machine's, not the installation's.
		testutil.SkipIncapable(t, "perf record is not permitted or not working here: %v\n%s", err, out)
	}
	reportFile := filepath.Join(dir, "report.txt")
	runTo(t, reportFile, "perf", "report", "--stdio", "-i", data)
	selfFile := filepath.Join(dir, "report-self.txt")
	runTo(t, selfFile, "perf", "report", "--stdio", "--no-children", "-i", data)
	scriptFile := filepath.Join(dir, "script.txt")
	runTo(t, scriptFile, "perf", "script", "-i", data)

	var got []*Hotness
	for _, c := range []struct{ file, source string }{
		{reportFile, "perf report"}, {selfFile, "perf report"}, {scriptFile, "perf script"},
	} {
		h, err := Read(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if h.Source != c.source || h.Unit != "cpu-clock" || h.Total <= 0 {
			t.Errorf("%s: source %q unit %q total %v", c.file, h.Source, h.Unit, h.Total)
		}
		hottest(t, h, "hot_spin", 0.5)
		got = append(got, h)
	}
	// The same samples, so the same share of hot_spin (see reportTolerance).
	rows := reportRows(t, selfFile)
	for _, h := range got[1:] {
		if tol, d := reportTolerance(rows), math.Abs(h.Of("hot_spin")-got[0].Of("hot_spin")); d > tol {
			t.Errorf("hot_spin: %s says %v, perf report %v: %.6f apart, more than perf report's rounding of %d rows allows (%.6f)",
				h.Source, h.Of("hot_spin"), got[0].Of("hot_spin"), d, rows, tol)
		}
	}
}

// reportTolerance is how far a function's share read from perf report
// may be from its share in perf script output of the same recording,
// when the report's table has rows rows. perf script lists every sample
// with its period, so its share is exact. perf report prints each row's
// share rounded to 0.01 %, off by up to 0.005 % (0.00005); and when the
// printed rows sum to more than 100 %, Read divides them by that sum,
// which is off by up to 0.005 % per row. So the two shares differ by at
// most (rows+1) * 0.00005. (A fresh clone saw perf script 115/116 =
// 0.99138 and perf report 99.14 % / 100.02 % = 0.99120, 0.00018 apart,
// over the 0.0001 this test used to allow.) A real disagreement moves a
// share by at least one sample, 1/116 there, far outside.
func reportTolerance(rows int) float64 {
	return float64(rows+1)*0.00005 + 1e-12
}

// TestReportTolerance: perf report and perf script output of one recording
// agree within reportTolerance; a report and a script of two recordings
// (93.69 % against 98 of 105 samples) do not, nor do 0.99 and 0.5.
func TestReportTolerance(t *testing.T) {
	report, err := Read("testdata/perf-report-self.txt")
	if err != nil {
		t.Fatal(err)
	}
	rows := reportRows(t, "testdata/perf-report-self.txt")
	for _, c := range []struct {
		script string
		agree  bool
	}{
		{"testdata/perf-script.txt", true},
		{"testdata/perf-script-nocallchain.txt", false},
	} {
		h, err := Read(c.script)
		if err != nil {
			t.Fatal(err)
		}
		d := math.Abs(h.Of("hot_spin") - report.Of("hot_spin"))
		if agree := d <= reportTolerance(rows); agree != c.agree {
			t.Errorf("%s: hot_spin %v, the report's %v: %.6f apart, tolerance %.6f for %d rows: agree = %v, want %v",
				c.script, h.Of("hot_spin"), report.Of("hot_spin"), d, reportTolerance(rows), rows, agree, c.agree)
		}
	}
	if math.Abs(0.99-0.5) <= reportTolerance(rows) {
		t.Errorf("0.99 and 0.5 within the tolerance %v", reportTolerance(rows))
	}
}

// reportRows counts the rows of a perf report --stdio --no-children table:
// the lines that start with a share; the call-graph lines under a row
// start with | or --.
func reportRows(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	n := len(regexp.MustCompile(`(?m)^\s+[0-9]+\.[0-9]+%\s`).FindAll(data, -1))
	if n == 0 {
		t.Fatalf("%s: no table rows", file)
	}
	return n
}

// TestPerfReportSelfColumn reads a checked-in report with call graphs,
// where __libc_start_call_main has 98.20% children but no self time.
func TestPerfReportSelfColumn(t *testing.T) {
	for _, file := range []string{"testdata/perf-report-children.txt", "testdata/perf-report-self.txt"} {
		h, err := Read(file)
		if err != nil {
			t.Fatal(err)
		}
		if h.Source != "perf report" || h.Total != 27750000 || h.Unit != "cpu-clock" {
			t.Errorf("%s: %q %v %q", file, h.Source, h.Total, h.Unit)
		}
		if f := h.Of("hot_spin"); math.Abs(f-0.9369) > 1e-9 {
			t.Errorf("%s: hot_spin = %v; want 0.9369", file, f)
		}
		if f := h.Of("__libc_start_call_main"); f != 0 {
			t.Errorf("%s: __libc_start_call_main self = %v; want 0 (it has only children time)", file, f)
		}
		if f := h.Of("[k] _raw_spin_unlock"); math.Abs(f-0.009) > 1e-9 {
			t.Errorf("%s: [k] _raw_spin_unlock = %v; want 0.009", file, f)
		}
		if _, ok := h.Funcs["0000000000000000"]; ok {
			t.Errorf("%s: unknown address kept as a function", file)
		}
		checkSum(t, h)
	}
}

func TestPerfScriptFiles(t *testing.T) {
	for _, c := range []struct {
		file    string
		samples float64
		hot     float64
	}{
		{"testdata/perf-script.txt", 111, 104},
		{"testdata/perf-script-nocallchain.txt", 105, 98},
	} {
		h, err := Read(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if h.Source != "perf script" || h.Total != c.samples*250000 || h.Skipped != 0 {
			t.Errorf("%s: %q total %v skipped %d", c.file, h.Source, h.Total, h.Skipped)
		}
		if f := h.Of("hot_spin"); math.Abs(f-c.hot/c.samples) > 1e-12 {
			t.Errorf("%s: hot_spin = %v; want %v/%v", c.file, f, c.hot, c.samples)
		}
		checkSum(t, h)
	}
}

func TestPerfScriptEvents(t *testing.T) {
	// Two events: only the first one's samples count; a sample without
	// frames and one in unknown code count towards the total only.
	const script = `prog 10 1.000001: 3 cycles:u: 
	401000 hot+0x10 (/bin/prog)
	401200 main+0x5 (/bin/prog)

prog 10 1.000002: 5 instructions:u: 
	401000 hot+0x10 (/bin/prog)

prog 10 1.000003: 1 cycles:u: 
	7f0000001000 [unknown] ([unknown])

prog 10 1.000004: 4 cycles:u: 
	401300 std::vector<int>::push_back(int const&)+0x3 (/bin/prog)
	401200 main+0x5 (/bin/prog)

prog 10 1.000005: 2 cycles:u: 
`
	h, err := Parse(strings.NewReader(script), "script")
	if err != nil {
		t.Fatal(err)
	}
	if h.Unit != "cycles:u" || h.Total != 10 {
		t.Fatalf("unit %q total %v; want cycles:u, 10", h.Unit, h.Total)
	}
	want := map[string]float64{"hot": 0.3, "std::vector<int>::push_back(int const&)": 0.4}
	if len(h.Funcs) != len(want) {
		t.Errorf("funcs = %v; want %v", h.Funcs, want)
	}
	for fn, f := range want {
		if math.Abs(h.Funcs[fn]-f) > 1e-12 {
			t.Errorf("%s = %v; want %v", fn, h.Funcs[fn], f)
		}
	}
}

func TestCallgrind(t *testing.T) {
	testutil.NeedTool(t, "valgrind", "callgrind_annotate")
	bin := buildBench(t)
	// The default run, and one whose file has instruction addresses as a
	// second position column and jump lines.
	for _, opts := range [][]string{nil, {"--dump-instr=yes", "--collect-jumps=yes"}} {
		t.Run(strings.Join(append([]string{"default"}, opts...), " "), func(t *testing.T) {
			callgrind(t, bin, opts)
		})
	}
}

func callgrind(t *testing.T, bin string, opts []string) {
	out := filepath.Join(t.TempDir(), "callgrind.out")
	args := append(append([]string{"--tool=callgrind", "--callgrind-out-file=" + out}, opts...), bin, "30")
	log, err := exec.Command("valgrind", args...).CombinedOutput()
	if err != nil {
		testutil.SkipIncapable(t, "valgrind does not run here: %v\n%s", err, log)
	}
	h, err := Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if h.Source != "callgrind" || h.Unit != "Ir" {
		t.Errorf("source %q unit %q", h.Source, h.Unit)
	}
	// valgrind's own summary: "I   refs:      8,138,192".
	m := regexp.MustCompile(`I\s+refs:\s+([0-9,]+)`).FindSubmatch(log)
	if m == nil {
		t.Fatalf("no I refs line in valgrind output:\n%s", log)
	}
	refs, _ := strconv.ParseFloat(strings.ReplaceAll(string(m[1]), ",", ""), 64)
	if h.Total != refs {
		t.Errorf("total = %v; valgrind counted %v instructions", h.Total, refs)
	}
	hottest(t, h, "hot_spin", 0.5)
	if h.Of("cold_setup") <= 0 || h.Of("cold_setup") >= h.Of("hot_spin") {
		t.Errorf("cold_setup = %v, hot_spin = %v", h.Of("cold_setup"), h.Of("hot_spin"))
	}

	// callgrind_annotate's per-function self cost must agree.
	ann, err := exec.Command("callgrind_annotate", out).Output()
	if err != nil {
		t.Fatalf("callgrind_annotate: %v", err)
	}
	m = regexp.MustCompile(`(?m)^\s*([0-9,]+) \([ 0-9.]+%\)\s+\S*:hot_spin `).FindSubmatch(ann)
	if m == nil {
		t.Fatalf("callgrind_annotate output names no hot_spin:\n%s", ann)
	}
	self, _ := strconv.ParseFloat(strings.ReplaceAll(string(m[1]), ",", ""), 64)
	if got := h.Of("hot_spin") * h.Total; math.Abs(got-self) > 0.5 {
		t.Errorf("hot_spin self Ir = %v; callgrind_annotate says %v", got, self)
	}
}

func TestCallgrindFile(t *testing.T) {
	h, err := Read("testdata/callgrind.out.bench")
	if err != nil {
		t.Fatal(err)
	}
	// summary: 1748033; hot_spin's self cost per callgrind_annotate.
	if h.Total != 1748033 || math.Abs(h.Of("hot_spin")*h.Total-1597548) > 0.5 {
		t.Errorf("total %v, hot_spin %v Ir", h.Total, h.Of("hot_spin")*h.Total)
	}
	checkSum(t, h)
}

func TestCallgrindCompression(t *testing.T) {
	// Name compression shared by fn and cfn, a call's inclusive cost that
	// must not count as self cost, two position columns, hex costs,
	// relative positions and a recursion suffix.
	const cg = `# callgrind format
version: 1
positions: instr line
events: Ir Dr
summary: 1000

ob=(1) /bin/prog
fl=(1) prog.c
fn=(1) main
0x1000 3 10 2
cfn=(2) hot
calls=1 0x2000 7
+4 * 900 300
+2 4 0x14
fn=(2)
0x2000 7 800 100
+3 * 50
fn=(3) rec'2
0x3000 9 20
`
	h, err := Parse(strings.NewReader(cg), "cg")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"main": 0.03, "hot": 0.85, "rec": 0.02}
	for fn, f := range want {
		if math.Abs(h.Funcs[fn]-f) > 1e-12 {
			t.Errorf("%s = %v; want %v (all: %v)", fn, h.Funcs[fn], f, h.Funcs)
		}
	}
	if len(h.Funcs) != 3 || h.Total != 1000 || h.Unit != "Ir" {
		t.Errorf("funcs %v total %v unit %q", h.Funcs, h.Total, h.Unit)
	}
}

func TestFolded(t *testing.T) {
	const folded = `main;run;hot_loop 700
main;run;hot_loop.isra.0 100
main;run;helper.cold 50
main;setup;do_page_fault_[k] 100
java;Interpreter;foo(int, char) 40
main 10
`
	h, err := Parse(strings.NewReader(folded), "folded.txt")
	if err != nil {
		t.Fatal(err)
	}
	if h.Source != "folded" || h.Total != 1000 {
		t.Errorf("source %q total %v", h.Source, h.Total)
	}
	for _, c := range []struct {
		name string
		want float64
	}{
		{"hot_loop", 0.7},
		{"hot_loop.isra.0", 0.1},
		{"hot_loop.constprop.3", 0.8}, // no exact entry: the clone family
		{"helper", 0.05},
		{"helper.part.1", 0.05},
		{"do_page_fault", 0.1},
		{"[k] do_page_fault", 0.1},
		{"foo(int, char)", 0.04},
		{"main", 0.01},
		{"absent", 0},
	} {
		if got := h.Of(c.name); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Of(%q) = %v; want %v", c.name, got, c.want)
		}
	}
	top := h.Top(2)
	if len(top) != 2 || top[0].Name != "hot_loop" || top[1].Name != "hot_loop.isra.0" && top[1].Name != "do_page_fault" {
		t.Errorf("Top(2) = %+v", top)
	}
	if n := len(h.Top(0)); n != 6 {
		t.Errorf("Top(0) has %d entries; want 6", n)
	}
	// A literal Hotness (no index) gives the same answers.
	lit := &Hotness{Funcs: h.Funcs}
	if lit.Of("hot_loop.constprop.3") != h.Of("hot_loop.constprop.3") {
		t.Error("Of on a literal Hotness differs")
	}
	checkSum(t, h)
}

func TestCloneBase(t *testing.T) {
	for in, want := range map[string]string{
		"foo":                          "foo",
		"foo.isra.0":                   "foo",
		"foo.constprop.0.isra.0":       "foo",
		"foo.part.3.cold":              "foo",
		"foo.cold":                     "foo",
		"foo.lto_priv.0":               "foo",
		"foo.llvm.123456":              "foo",
		"main.main":                    "main.main",
		"runtime.(*mheap).alloc.func1": "runtime.(*mheap).alloc.func1",
		".cold":                        ".cold",
	} {
		if got := CloneBase(in); got != want {
			t.Errorf("CloneBase(%q) = %q; want %q", in, got, want)
		}
	}
}

// goProg writes a CPU profile of itself while spinning in main.spin.
const goProg = `package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"
)

//go:noinline
func spin(n int) uint64 {
	var s uint64
	for i := 0; i < n; i++ {
		s = s*6364136223846793005 + uint64(i)
	}
	return s
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	var s uint64
	for end := time.Now().Add(400 * time.Millisecond); time.Now().Before(end); {
		s += spin(100000)
	}
	pprof.StopCPUProfile()
	f.Close()
	fmt.Println(s)
}
`

func TestPprofFromGoProgram(t *testing.T) {
	testutil.NeedTool(t, "go")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"main.go": goProg, "go.mod": "module spin\n\ngo 1.22\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "spin")
	build := exec.Command(goBin, "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	prof := filepath.Join(dir, "cpu.pb.gz")
	if out, err := exec.Command(bin, prof).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	h, err := Read(prof)
	if err != nil {
		t.Fatal(err)
	}
	if h.Source != "pprof" || h.Unit != "cpu/nanoseconds" || h.Total <= 0 {
		t.Errorf("source %q unit %q total %v", h.Source, h.Unit, h.Total)
	}
	hottest(t, h, "main.spin", 0.5)
}

// TestPprofBuilt checks the sample choice and the inlined-frame rule on a
// profile written with github.com/google/pprof/profile.
func TestPprofBuilt(t *testing.T) {
	hot := &pprof.Function{ID: 1, Name: "pkg.hot"}
	inl := &pprof.Function{ID: 2, Name: "pkg.inlinedLeaf"}
	caller := &pprof.Function{ID: 3, Name: "main.main"}
	locHot := &pprof.Location{ID: 1, Address: 0x1000, Line: []pprof.Line{{Function: hot}}}
	locInl := &pprof.Location{ID: 2, Address: 0x2000, Line: []pprof.Line{{Function: inl}, {Function: caller}}}
	locMain := &pprof.Location{ID: 3, Address: 0x3000, Line: []pprof.Line{{Function: caller}}}
	locUnk := &pprof.Location{ID: 4, Address: 0x4000}
	p := &pprof.Profile{
		SampleType:        []*pprof.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}, {Type: "alloc", Unit: "bytes"}},
		DefaultSampleType: "cpu",
		Sample: []*pprof.Sample{
			{Location: []*pprof.Location{locHot, locMain}, Value: []int64{1, 600, 99999}},
			{Location: []*pprof.Location{locInl}, Value: []int64{1, 200, 0}},
			{Location: []*pprof.Location{locMain}, Value: []int64{1, 100, 0}},
			{Location: []*pprof.Location{locUnk}, Value: []int64{1, 100, 0}},
		},
		Location: []*pprof.Location{locHot, locInl, locMain, locUnk},
		Function: []*pprof.Function{hot, inl, caller},
	}
	var gz, plain bytes.Buffer
	if err := p.Write(&gz); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteUncompressed(&plain); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"gzip": gz.Bytes(), "plain": plain.Bytes()} {
		h, err := Parse(bytes.NewReader(data), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.Unit != "cpu/nanoseconds" || h.Total != 1000 {
			t.Errorf("%s: unit %q total %v", name, h.Unit, h.Total)
		}
		for fn, want := range map[string]float64{"pkg.hot": 0.6, "pkg.inlinedLeaf": 0.2, "main.main": 0.1} {
			if got := h.Of(fn); math.Abs(got-want) > 1e-12 {
				t.Errorf("%s: %s = %v; want %v", name, fn, got, want)
			}
		}
		if len(h.Funcs) != 3 {
			t.Errorf("%s: funcs %v", name, h.Funcs)
		}
	}
}

func TestErrors(t *testing.T) {
	var gzText bytes.Buffer
	zw := gzip.NewWriter(&gzText)
	zw.Write([]byte("hello, not a profile\n"))
	zw.Close()
	for _, c := range []struct {
		name, data string
		want       string
	}{
		{"empty.txt", "", "empty profile"},
		{"blank.txt", "\n  \n", "empty profile"},
		{"source.c", benchC, "unrecognised profile format: expected perf report --stdio output"},
		{"elf", "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00", "binary data that is not a pprof profile"},
		{"text.gz", gzText.String(), "binary data that is not a pprof profile"},
		{"bad.gz", "\x1f\x8b\x08\x00garbage", "bad gzip data"},
		{"nosym.txt", "# Overhead  Command  Shared Object\n# ........  .......  .............\n#\n    90.00%  b  b\n", "no Symbol column"},
		{"noheader.txt", "# Overhead  Command  Symbol\n    90.00%  b  [.] x\n", "without its column header"},
		{"norows.txt", "# Overhead  Command  Symbol\n# ........  .......  ......\n#\n", "table has no rows"},
		{"over.txt", "# Overhead  Symbol\n# ........  ......\n    90.00%  [.] a\n    90.00%  [.] b\n", "more than 100%"},
		{"cg.txt", "# callgrind format\nevents: Ir\nfn=main\n", "has no Ir costs"},
		{"cgbad.txt", "# callgrind format\nevents: Ir\nfn=main\n3 12x\n", "cgbad.txt:4: bad cost"},
		{"cgnoev.txt", "# callgrind format\nfn=main\n3 12\n", "without an events: line"},
		{"folded0.txt", "a;b 0\n", "folded stacks with no counts"},
		{"script0.txt", "prog 1 2.5: 0 cycles: \n", "has no samples"},
	} {
		h, err := Parse(strings.NewReader(c.data), c.name)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s: got %v, %v; want an error naming the file and containing %q", c.name, h, err, c.want)
		}
	}
	if _, err := Read(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Read of a missing file: %v", err)
	}
	_, err := Parse(strings.NewReader(benchC), "x.c")
	if !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("unknown format error %v does not wrap ErrUnknownFormat", err)
	}
}

func TestLongLine(t *testing.T) {
	long := "a;" + strings.Repeat("x", maxLine+10) + " 1\n"
	_, err := Parse(strings.NewReader("a;b 1\n"+long), "long.txt")
	if err == nil || !strings.Contains(err.Error(), "long.txt:2: line longer") {
		t.Errorf("got %v; want a positioned too-long error", err)
	}
}

func FuzzParse(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzParse holds a short piece of each format.
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := Parse(bytes.NewReader(data), "fuzz")
		if err != nil {
			if h != nil {
				t.Fatal("result with an error")
			}
			return
		}
		sum := 0.0
		for fn, v := range h.Funcs {
			if !(v > 0 && v <= 1) || fn == "" {
				t.Fatalf("%q: fraction %v", fn, v)
			}
			sum += v
		}
		if sum > 1+1e-9 {
			t.Fatalf("fractions sum to %v", sum)
		}
		h.Top(3)
		for fn := range h.Funcs {
			h.Of(fn)
		}
	})
}
