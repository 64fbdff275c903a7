package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// These tests run perfbot bisect on the demo's "bisect" history: 8 to 32 real
// C commits built with gcc, where one adds a real 30 % slowdown of text_ms,
// one only moves the hot loop's alignment (about 1.4x in the plain build),
// one does not build (the next fixes it), and the others change nothing.

// bisectDemo creates the history in a temporary folder.
func bisectDemo(t *testing.T, commits int, seed uint64) *demo.Repo {
	t.Helper()
	testutil.NeedTool(t, "git", "gcc", "make")
	r, err := demo.Create(filepath.Join(t.TempDir(), "kvstore"), demo.Options{History: demo.HistoryBisect, Commits: commits, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// bisectJSONDoc is the part of the JSON report the tests read.
type bisectJSONDoc struct {
	Found  bool `json:"found"`
	Result struct {
		Culprit *struct {
			Hash string `json:"hash"`
		} `json:"culprit"`
		Steps []struct {
			Verdict string `json:"verdict"`
			Reason  string `json:"reason"`
			Commit  struct {
				Hash string `json:"hash"`
			} `json:"commit"`
		} `json:"steps"`
		Triage *struct {
			Verdict  string `json:"verdict"`
			Sentence string `json:"sentence"`
		} `json:"triage"`
		Runs     int `json:"runs"`
		Builds   int `json:"builds"`
		Culprits []struct {
			Commit struct {
				Hash string `json:"hash"`
			} `json:"commit"`
			Via []struct {
				Hash string `json:"hash"`
			} `json:"via"`
			Merge       bool `json:"merge"`
			Interaction bool `json:"interaction"`
		} `json:"culprits"`
		Ranges []struct {
			Kind   string `json:"kind"`
			Status string `json:"status"`
		} `json:"ranges"`
	} `json:"result"`
}

// freshStore is the --store of a bisection's attempt: a new, empty store
// for each, so that a retry takes fresh runs instead of replaying the
// decisions of the runs that misled the first (--restart forgets only the
// saved state).
func freshStore(t *testing.T, attempt int) string {
	t.Helper()
	return "--store=" + filepath.Join(t.TempDir(), fmt.Sprintf("store-%d", attempt))
}

func bisectRun(t *testing.T, args ...string) (int, bisectJSONDoc, string) {
	t.Helper()
	code, out, errOut := perfbot(t, append([]string{"bisect", "--format", "json"}, args...)...)
	var doc bisectJSONDoc
	if code != exitError {
		schematest.ValidateJSON(t, "bisect", []byte(out))
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("exit %d, report is not JSON: %v\n%s\nstderr:\n%s", code, err, out, errOut)
		}
	}
	return code, doc, errOut
}

// TestBisectBadInput: wrong revisions, swapped ends, unknown metrics and
// bad flags get exit 2 and an error that names what is wrong, before any
// build.
func TestBisectBadInput(t *testing.T) {
	r := bisectDemo(t, 8, 1)
	good, bad := r.Commits[0].Hash, r.Commits[len(r.Commits)-1].Hash
	testutil.Git(t, r.Dir, "branch", "side", r.Commits[2].Hash)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown good", []string{"--good", "no-such-rev", "--bad", bad}, []string{"--good", "unknown revision", "no-such-rev"}},
		{"unknown bad", []string{"--good", good, "--bad", "HEAD~99"}, []string{"--bad", "HEAD~99"}},
		{"swapped", []string{"--good", bad, "--bad", good}, []string{"swapped", "--good must be the older commit"}},
		{"same", []string{"--good", good, "--bad", good}, []string{"same commit"}},
		{"missing good", []string{"--bad", bad}, []string{"--good is required"}},
		{"unknown metric", []string{"--good", good, "--bad", bad, "--metric", "txt_ms"}, []string{`--metric "txt_ms"`, "does not produce it", "text_ms, data_ms"}},
		{"bad mode", []string{"--good", good, "--bad", bad, "--layout-robust", "always"}, []string{`--layout-robust "always"`}},
		{"bad format", []string{"--good", good, "--bad", bad, "--format", "xml"}, []string{`unknown format "xml"`}},
		{"bad preset", []string{"--good", good, "--bad", bad, "--layout-robust", "forced", "--preset", "fortran"}, []string{`--preset "fortran"`}},
		{"bad knobs", []string{"--good", good, "--bad", bad, "--layout-robust", "forced", "--knobs", "fortran"}, []string{"--knobs is deprecated: use --preset", `--preset "fortran"`}},
		{"bad speculate", []string{"--good", good, "--bad", bad, "--speculate", "always"}, []string{`--speculate "always"`}},
		{"few runs", []string{"--good", good, "--bad", bad, "--runs", "2"}, []string{"--runs 2: want at least 3"}},
		{"bad cpu", []string{"--good", good, "--bad", bad, "--cpu", "first"}, []string{`--cpu "first"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"bisect", r.JobFile, "--metric", "text_ms"}, tc.args...)
			code, out, errOut := perfbot(t, args...)
			if code != exitError {
				t.Fatalf("exit %d, want 2; stdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if _, err := os.Stat(filepath.Join(r.Dir, ".perfbot", "builds")); err == nil {
				t.Errorf("bad input started builds")
			}
		})
	}
}

// TestBisectWrongDirection: a --bad commit that is faster than --good (for
// a lower-is-better metric) is not a regression: the ends are measured,
// then bisect stops with exit 2 saying the revisions look swapped;
// --improvement searches for that commit instead.
func TestBisectWrongDirection(t *testing.T) {
	g := newGitRepo(t)
	slow := g.Commit("slow", map[string]string{"bench.c": testutil.BenchC(2, "slow"), "Makefile": testutil.BenchMakefile})
	g.Commit("a comment", map[string]string{"bench.c": testutil.BenchC(2, "a comment")})
	fast := g.Commit("twice as fast", map[string]string{"bench.c": testutil.BenchC(1, "fast")})
	jobFile := writeJob(t, jobYAML(g.Dir, 10, "./bench 400000"))
	code, _, errOut := perfbot(t, "bisect", jobFile, "--good", slow, "--bad", fast, "--metric", "work_ms", "--cpu", "none")
	if code != exitError || !strings.Contains(errOut, "not a regression") || !strings.Contains(errOut, "swapped") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 saying the revisions look swapped", code, errOut)
	}
	code, doc, errOut := bisectRun(t, jobFile, "--good", slow, "--bad", fast, "--metric", "work_ms", "--cpu", "none", "--improvement")
	if code != exitOK || doc.Result.Culprit == nil || doc.Result.Culprit.Hash != fast {
		t.Fatalf("--improvement: exit %d, culprit %+v, want %s; stderr:\n%s", code, doc.Result.Culprit, fast[:12], errOut)
	}
}

// TestBisectNoChange: ends that perform the same stop the bisection at
// once, with exit 1 and the figures.
func TestBisectNoChange(t *testing.T) {
	r := bisectDemo(t, 8, 1)
	// data_ms does not change anywhere in the bisect history.
	code, out, errOut := perfbot(t, "bisect", r.JobFile, "--good", r.Commits[0].Hash, "--bad", r.Commits[len(r.Commits)-1].Hash,
		"--metric", "data_ms", "--layout-robust", "forced")
	if code != exitRegression || !strings.Contains(errOut, "do not differ") || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and 'do not differ'", code, out, errOut)
	}
	if strings.Contains(errOut, "step 1") {
		t.Errorf("measured steps after the ends did not differ:\n%s", errOut)
	}
}

// demoTruth returns the hashes of the real regression and of the
// alignment-only commit.
func demoTruth(r *demo.Repo) (real, align string) {
	return r.ByLabel(demo.EffectRealRegression).Hash, r.ByLabel(demo.EffectTextAlignment).Hash
}

// TestBisectLayoutRobust is the main case: with forced alignment
// the alignment-only commit changes nothing, so the bisection names the
// real regression (and never stops at the alignment-only commit); the
// broken build is skipped if tested; the check confirms the culprit. A run
// that the check cannot confirm (the shared machine's bursts of load) is
// retried once; a confirmed wrong culprit fails at once.
func TestBisectLayoutRobust(t *testing.T) {
	if testing.Short() {
		t.Skip("bisects 32 real commits")
	}
	r := bisectDemo(t, 32, 1)
	real, align := demoTruth(r)
	for attempt := 1; ; attempt++ {
		code, doc, errOut := bisectRun(t, r.JobFile, "--good", r.Commits[0].Hash, "--bad", r.Commits[len(r.Commits)-1].Hash,
			"--metric", "text_ms", "--layout-robust", "forced", "--restart", freshStore(t, attempt))
		if doc.Result.Culprit != nil && doc.Result.Culprit.Hash == align {
			t.Fatalf("layout-robust bisection stopped at the alignment-only commit:\n%s", errOut)
		}
		if doc.Found {
			if doc.Result.Culprit.Hash != real || code != exitOK {
				t.Fatalf("exit %d, confirmed culprit %s, want the real regression %s:\n%s", code, doc.Result.Culprit.Hash[:12], real[:12], errOut)
			}
			for _, s := range doc.Result.Steps {
				if s.Commit.Hash == r.ByLabel(demo.EffectBuildFailure).Hash && s.Verdict != "skip" {
					t.Errorf("the broken commit was not skipped: %+v", s)
				}
			}
			t.Logf("attempt %d: %d builds, %d runs", attempt, doc.Result.Builds, doc.Result.Runs)
			return
		}
		if code != exitRegression || attempt == 2 {
			t.Fatalf("attempt %d: exit %d, no confirmed culprit:\n%s", attempt, code, errOut)
		}
		t.Logf("attempt %d: the check did not confirm a culprit; retrying", attempt)
	}
}

// TestBisectSweep: the other layout-robust mode measures every commit under
// four text layouts (the figure is their geometric mean, which an
// alignment shift does not move): it names the real regression, not the
// alignment-only commit. It names one culprit (--max-culprits 1): the
// search of the ranges a culprit leaves, which took two thirds of its
// runs under four layouts, is TestBisectMerge's and the bisect package's.
func TestBisectSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("bisects 16 real commits under 4 layouts")
	}
	r := bisectDemo(t, 16, 2)
	real, align := demoTruth(r)
	for attempt := 1; ; attempt++ {
		code, doc, errOut := bisectRun(t, r.JobFile, "--good", r.Commits[0].Hash, "--bad", r.Commits[len(r.Commits)-1].Hash,
			"--metric", "text_ms", "--layout-robust", "sweep", "--layouts", "4", "--max-culprits", "1", "--restart", freshStore(t, attempt))
		if doc.Result.Culprit != nil && doc.Result.Culprit.Hash == align {
			t.Fatalf("sweep bisection stopped at the alignment-only commit:\n%s", errOut)
		}
		if doc.Found {
			if doc.Result.Culprit.Hash != real || code != exitOK {
				t.Fatalf("exit %d, confirmed culprit %s, want %s:\n%s", code, doc.Result.Culprit.Hash[:12], real[:12], errOut)
			}
			t.Logf("attempt %d: %d builds, %d runs", attempt, doc.Result.Builds, doc.Result.Runs)
			return
		}
		if code != exitRegression || attempt == 2 {
			t.Fatalf("attempt %d: exit %d, no confirmed culprit:\n%s", attempt, code, errOut)
		}
	}
}

// TestBisectPlainTriage: without --layout-robust the bisection measures
// plain builds like the 0-day robot, and the alignment-only commit looks
// like a change. Wherever it lands, the triage of the culprit must say
// what it is: text-alignment for the alignment-only commit,
// real-regression for the real one.
func TestBisectPlainTriage(t *testing.T) {
	if testing.Short() {
		t.Skip("bisects 32 real commits and triages the culprit")
	}
	r := bisectDemo(t, 32, 3)
	real, align := demoTruth(r)
	for attempt := 1; ; attempt++ {
		code, doc, errOut := bisectRun(t, r.JobFile, "--good", r.Commits[0].Hash, "--bad", r.Commits[len(r.Commits)-1].Hash,
			"--metric", "text_ms", "--restart", freshStore(t, attempt))
		if doc.Found {
			c := doc.Result.Culprit.Hash
			want := map[string]string{real: "real-regression", align: "text-alignment"}[c]
			if want == "" {
				t.Fatalf("confirmed culprit %s is neither the real regression %s nor the alignment shift %s:\n%s", c[:12], real[:12], align[:12], errOut)
			}
			if doc.Result.Triage == nil || doc.Result.Triage.Verdict != want {
				t.Fatalf("culprit %s: triage %+v, want %s:\n%s", c[:12], doc.Result.Triage, want, errOut)
			}
			t.Logf("attempt %d: landed on the %s commit; triage: %s", attempt, want, doc.Result.Triage.Sentence)
			return
		}
		if code != exitRegression || attempt == 2 {
			t.Fatalf("attempt %d: exit %d, no confirmed culprit:\n%s", attempt, code, errOut)
		}
		t.Logf("attempt %d: the check did not confirm a culprit; retrying", attempt)
	}
}

// TestBisectKillAndResume kills a bisection (the built binary, SIGKILL)
// after some runs, then runs the same command again: it resumes from the
// saved state, and no run is taken twice: the runs stored equal the runs
// the two processes took (the run in flight at the kill is lost, not
// stored).
func TestBisectKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("bisects 32 real commits twice")
	}
	r := bisectDemo(t, 32, 5)
	bin := buildPerfbot(t)
	args := []string{"bisect", r.JobFile, "--good", r.Commits[0].Hash, "--bad", r.Commits[len(r.Commits)-1].Hash,
		"--metric", "text_ms", "--layout-robust", "forced", "--format", "json"}

	logPath := filepath.Join(t.TempDir(), "stderr")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it in the middle of the steps.
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(logPath)
		if strings.Contains(string(data), "step 3: testing") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a run or two into the step
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	logFile.Close()
	first, _ := os.ReadFile(logPath)
	if !strings.Contains(string(first), "step 3: testing") {
		t.Fatalf("never reached step 3:\n%s", first)
	}
	takenBefore := strings.Count(string(first), "perfbot: run ")

	c2 := exec.Command(bin, args...)
	var out, errOut strings.Builder
	c2.Stdout, c2.Stderr = &out, &errOut
	if err := c2.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitRegression {
			t.Fatalf("resumed bisect: %v\n%s", err, errOut.String())
		}
	}
	if !strings.Contains(errOut.String(), "resuming the saved bisection") {
		t.Errorf("the second run did not resume:\n%s", errOut.String())
	}
	if strings.Contains(errOut.String(), "step 1: testing") {
		t.Errorf("the resumed bisection tested step 1 again:\n%s", errOut.String())
	}
	takenAfter := strings.Count(errOut.String(), "perfbot: run ")
	var doc bisectJSONDoc
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}

	// Count what the store holds for every commit of the history.
	stored := storedRuns(t, r)
	if stored != takenBefore+takenAfter && stored != takenBefore+takenAfter+1 {
		t.Errorf("store holds %d runs; the killed run logged %d and the resumed one %d: a run was repeated or lost", stored, takenBefore, takenAfter)
	}
	// The report counts the runs of both processes, except those taken
	// after the last checkpoint of the first, which the second reused.
	if doc.Result.Runs > stored || doc.Result.Runs < takenAfter {
		t.Errorf("report says %d runs taken; store has %d, resumed process took %d", doc.Result.Runs, stored, takenAfter)
	}
	t.Logf("killed after %d runs, resumed with %d more; %d stored", takenBefore, takenAfter, stored)

	// A third run finds the finished bisection and takes nothing.
	code, _, errOut3 := perfbot(t, args[1:]...)
	_ = code
	if n := strings.Count(errOut3, "perfbot: run "); n != 0 {
		t.Errorf("re-running a finished bisection took %d runs", n)
	}
}

// storedRuns counts the runs stored for every commit of r under the
// forced-alignment variant.
func storedRuns(t *testing.T, r *demo.Repo) int {
	t.Helper()
	jobs, err := job.Load(r.JobFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(r.Dir, ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := knobs.LookupIn("c", filepath.Join(st.Dir(), "knobs"))
	if err != nil {
		t.Fatal(err)
	}
	vid := measure.VariantID(p.ForcedAlignment())
	n := 0
	for _, c := range r.Commits {
		recs, err := st.RunsWithoutValues(context.Background(), jobs[0].Key(), c.Hash, vid)
		if err != nil {
			t.Fatal(err)
		}
		for i, rec := range recs {
			if rec.Index != i+1 {
				t.Errorf("%s: run numbers %v are not 1..%d", c.Hash[:12], rec.Index, len(recs))
			}
		}
		n += len(recs)
	}
	return n
}
