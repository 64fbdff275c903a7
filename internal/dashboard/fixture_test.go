package dashboard

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/watch"
)

// fixture is a store written by real perfbot watch cycles, shared by the
// subtests of TestDashboard: a git repository whose branch gains six
// commits after its base, one of them (slow) a 2x slowdown, tested every
// second commit with a forced-alignment history beside the plain one, so
// that the slowdown is found between two tested commits by bisection,
// triaged (real-regression) and recorded as a finding.
type fixture struct {
	dir       string
	watchFile string
	jobFile   string
	cfg       *watch.Config
	base      string
	slow      string // the culprit
	head      string
	srv       *Server
	ts        *httptest.Server
	token     string
}

// newFixture builds the store (about 10 s of real builds and runs) and
// serves it on a loopback port with a token.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	testutil.NeedTool(t, "git", "gcc", "make")
	r := testutil.NewGitRepo(t)
	f := &fixture{dir: filepath.Dir(r.Dir), token: "s3cret-token"}
	f.base = r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	f.jobFile = filepath.Join(f.dir, "bench.yaml")
	write(t, f.jobFile, fmt.Sprintf(`repo: %s
build: {command: make bench, artifacts: [bench]}
run: {command: ./bench 1000000, timeout: 60s}
runs: 6
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`, r.Dir))
	f.watchFile = filepath.Join(f.dir, "watch.yaml")
	write(t, f.watchFile, "jobs:\n  - {file: bench.yaml, histories: [forced]}\nbranches: [main]\ntest: every-2\nreport: {dir: reports}\n")
	cfg, err := watch.Load(f.watchFile)
	if err != nil {
		t.Fatal(err)
	}
	f.cfg = cfg
	ctx := context.Background()
	w := &watch.Watcher{Config: cfg, CPUMode: "none", Logf: t.Logf}
	if rep, err := w.Cycle(ctx); err != nil || len(rep.Errors) > 0 {
		t.Fatalf("cycle 1: %v %v", err, rep.Errors)
	}
	r.Commit("docs", map[string]string{"README": "bench\n"})
	r.Commit("more docs", map[string]string{"README": "bench, more\n"})
	f.slow = r.Commit("hash twice", map[string]string{"bench.c": testutil.BenchC(2, "base")})
	r.Commit("docs again", map[string]string{"README": "bench, twice\n"})
	r.Commit("notes", map[string]string{"NOTES": "a note\n"})
	f.head = r.Commit("more notes", map[string]string{"NOTES": "two notes\n"})
	rep, err := w.Cycle(ctx)
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("cycle 2: %v %v", err, rep.Errors)
	}
	if len(rep.Findings) == 0 || rep.Findings[0] != f.slow {
		t.Fatalf("cycle 2 found %v, want the slowdown %s", rep.Findings, f.slow[:12])
	}
	f.srv, err = New(ctx, Config{Watch: cfg, Token: f.token, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	f.ts = httptest.NewServer(f.srv.Handler())
	t.Cleanup(func() {
		f.ts.Close()
		f.srv.Close()
	})
	return f
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
