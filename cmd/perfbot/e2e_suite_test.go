package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/testutil"
)

// suiteReport is what the suite tests read of compare --format json: every
// metric (named as lkp names it) with its change in each column.
type suiteReport = jsonReport

// TestCompareSuite is issue 13's end-to-end check: perfbot compare on a
// generated git repository whose build is trivial and whose run is a
// suite. hyperfine times a script that does three times the work in the
// second commit; stress-ng runs two stressors (a params matrix) on both
// commits. The metrics come out with the suites' lkp names.
func TestCompareSuite(t *testing.T) {
	testutil.NeedTool(t, "git", "hyperfine", "stress-ng")
	r := testutil.NewGitRepo(t)
	work := func(n int) string {
		return "i=0\nwhile [ $i -lt " + strconv.Itoa(n) + " ]; do i=$((i+1)); done\n"
	}
	base := r.Commit("base", map[string]string{"work.sh": work(30000)})
	slow := r.Commit("three times the work", map[string]string{"work.sh": work(90000)})

	dir := t.TempDir()
	timing := filepath.Join(dir, "timing.yaml")
	code, _, errOut := perfbot(t, "init", "--suite", "hyperfine", "--repo", r.Dir, "--runs", "3", "-o", timing,
		"command=sh work.sh", "name_as=work", "runs=3", "warmup=0")
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	code, out, errOut := perfbot(t, "compare", "--cpu", "none", "--format", "json", timing, base, slow)
	if code == exitError {
		t.Fatalf("compare: exit %d\n%s", code, errOut)
	}
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	changes := map[string]float64{}
	for _, m := range rep.metrics() {
		if len(m.Comparisons) == 1 {
			changes[m.Metric] = m.Comparisons[0].Change
		}
	}
	for _, name := range []string{"hyperfine.work.mean", "hyperfine.work.median", "hyperfine.work.min", "hyperfine.work.max", "time.elapsed_time"} {
		if _, ok := changes[name]; !ok {
			t.Errorf("no %s in the comparison; metrics: %v", name, changes)
		}
	}
	if c := changes["hyperfine.work.mean"]; c < 50 {
		t.Errorf("hyperfine.work.mean changed %+.1f%%; want the three-fold work to show (well over +50%%)", c)
	}

	// stress-ng over a params matrix: one table per stressor.
	stress := filepath.Join(dir, "stress.yaml")
	if err := os.WriteFile(stress, []byte("repo: "+r.Dir+`
build: {command: "true"}
suite:
  name: stress-ng
  stressor: ${stressor}
  ops: 3000
run: {cpu: none}
runs: 3
params:
  stressor: [mutex, cpu]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = perfbot(t, "compare", "--format", "json", stress, base, slow)
	if code == exitError {
		t.Fatalf("compare stress-ng: exit %d\n%s", code, errOut)
	}
	var doc suiteReport
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Tables) != 2 {
		t.Fatalf("json: %v, want two jobs:\n%s", err, out)
	}
	for i, st := range []string{"mutex", "cpu"} {
		var names []string
		for _, m := range doc.Tables[i].Metrics {
			names = append(names, m.Metric)
		}
		if !strings.Contains(doc.Tables[i].Job, "stressor="+st) || len(names) < 2 ||
			names[0] != "stress-ng."+st+".ops_per_sec" || !slices.Contains(names, "stress-ng."+st+".ops") {
			t.Errorf("job %s: metrics %v; want stress-ng.%s.ops_per_sec first, and .ops", doc.Tables[i].Job, names, st)
		}
	}
	if jobs, err := job.Load(stress); err != nil || jobs[0].Suite == nil {
		t.Errorf("job.Load: %v", err)
	}
}
