package watch

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// benchWatch is the tests' watched project: a git repository whose first
// commit, base, holds testutil.BenchC's benchmark, and beside it a job
// file bench.yaml (runs runs of ./bench arg, lower work_ms is better;
// run extra fields, such as "cpu: auto", in runExtra) and a watch file
// watch.yaml with the given content, loaded.
type benchWatch struct {
	repo    *testutil.GitRepo
	dir     string // the folder of the job and watch files
	base    string
	jobFile string
	cfg     *Config
}

func newBenchWatch(t *testing.T, runs int, arg, runExtra, watchYAML string) *benchWatch {
	t.Helper()
	testutil.NeedTool(t, "git", "gcc", "make")
	r := testutil.NewGitRepo(t)
	b := &benchWatch{repo: r, dir: filepath.Dir(r.Dir)}
	b.base = r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	b.jobFile = filepath.Join(b.dir, "bench.yaml")
	if runExtra != "" {
		runExtra = ", " + runExtra
	}
	write(t, b.jobFile, fmt.Sprintf(`repo: %s
build: {command: make bench, artifacts: [bench]}
run: {command: ./bench %s, timeout: 60s%s}
runs: %d
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`, r.Dir, arg, runExtra, runs))
	watchFile := filepath.Join(b.dir, "watch.yaml")
	write(t, watchFile, watchYAML)
	cfg, err := Load(watchFile)
	if err != nil {
		t.Fatal(err)
	}
	b.cfg = cfg
	return b
}
