package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/watch"
)

// BenchHistoryEnv names a folder that keeps the 10,000-commit store of
// BenchmarkHistoryPage10000 between runs (building it takes about a
// minute); without it the store is built in a temporary folder each time.
const BenchHistoryEnv = "PERFBOT_BENCH_HISTORY"

// bigHistory is a git repository of n commits on main and a store in
// which watch tested every one of them (testutil.SyntheticHistory: cycles
// of 20 commits, 3 rounds each, a +30 % step at commit n/2, layout
// summaries of 32 functions whose offsets move at the step); it returns
// the store's folder.
func bigHistory(b *testing.B, n int) string {
	b.Helper()
	testutil.NeedTool(b, "git")
	dir := os.Getenv(BenchHistoryEnv)
	if dir == "" {
		dir = b.TempDir()
	}
	done := filepath.Join(dir, fmt.Sprintf("complete-%d", n))
	storeDir := filepath.Join(dir, ".perfbot")
	if _, err := os.Stat(done); err == nil {
		return storeDir
	}
	repo := filepath.Join(dir, "repo")
	_ = os.RemoveAll(repo)
	_ = os.RemoveAll(storeDir)
	testutil.Git(b, dir, "init", "-q", "-b", "main", repo)
	// git fast-import writes n commits in a second.
	var stream strings.Builder
	for i := range n {
		fmt.Fprintf(&stream, "commit refs/heads/main\nmark :%d\ncommitter perfbot <bench@perfbot.invalid> %d +0000\ndata <<EOT\ncommit %d: change the benchmark a little\nEOT\n", i+1, 1700000000+i, i)
		if i > 0 {
			fmt.Fprintf(&stream, "from :%d\n", i)
		}
		fmt.Fprintf(&stream, "M 644 inline file.txt\ndata <<EOT\n%d\nEOT\n\n", i)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = repo
	cmd.Stdin = strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, out)
	}
	hashes := strings.Fields(testutil.Git(b, repo, "log", "--first-parent", "--reverse", "--format=%H", "main"))
	st, err := store.Open(storeDir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	j := &job.Job{Name: "big", Repo: repo, File: filepath.Join(dir, "big.yaml"), Build: job.Build{Command: "make", Artifacts: []string{"bench"}}}
	key := j.Key()
	layout := func(i int) json.RawMessage {
		s := watch.LayoutSummary{Artifact: "bench", Sections: map[string]uint64{".text": 40000, ".data": 512, ".bss": 4096}, Offsets: map[string]uint64{}}
		shift := uint64(0)
		if i >= n/2 {
			s.Sections[".text"] += 24
			shift = 24
		}
		for f := range 32 {
			s.Offsets[fmt.Sprintf("func_%02d", f)] = (uint64(f*16) + shift) % 64
		}
		data, _ := json.Marshal(s)
		return data
	}
	start := time.Now()
	testutil.SyntheticHistory(b, st, testutil.HistorySpec{Job: key, Commits: n, Hashes: hashes, Layout: layout, Seed: 1,
		Level: func(i int) float64 {
			if i >= n/2 {
				return 1.3
			}
			return 1
		}})
	spec, _ := json.Marshal(j)
	if err := st.PutJob(context.Background(), key, j.Name, spec); err != nil {
		b.Fatal(err)
	}
	b.Logf("stored a history of %d tested commits in %v", n, time.Since(start).Round(time.Second))
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return storeDir
}

// BenchmarkHistoryPage10000 serves the history page of a job with 10,000
// tested commits (the plot, the layout history under it), with the
// history's comparisons in the memo as after the server's warm-up: the
// time per page, and its weight (B/page). The first build, which fills
// the memo, is logged.
func BenchmarkHistoryPage10000(b *testing.B) {
	const n = 10000
	dir := bigHistory(b, n)
	srv, err := New(context.Background(), Config{Stores: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	path := "/jobs/" + srv.cat.jobs[0].ID + "/history"
	start := time.Now()
	if code, _ := serve(h, path); code != 200 {
		b.Fatalf("%s: %d", path, code)
	}
	b.Logf("first view (the memo fills: %d comparisons) took %v", srv.cat.stores[0].memo.Len(), time.Since(start).Round(time.Millisecond))
	var size int
	cpu0, pages := cpuTime(), 0
	for b.Loop() {
		code, body := serve(h, path)
		if code != 200 {
			b.Fatalf("%s: %d", path, code)
		}
		size = len(body)
		pages++
	}
	// CPU time per page beside the wall time: on a shared machine the
	// wall time waits for other work, the CPU time does not.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(pages)/1e6, "cpu-ms/page")
	b.ReportMetric(float64(size), "B/page")
	for _, p := range []string{path + "?from=4900&to=5100", "/api/jobs/" + srv.cat.jobs[0].ID + "/history", "/"} {
		code, body := serve(h, p)
		b.Logf("%s: %d, %d bytes", p, code, len(body))
	}
}

// BenchmarkPages serves each page of the store of two real watch cycles
// (the fixture of TestDashboard) and reports its weight (B/page) beside
// its time; the static assets are served once per page load too.
func BenchmarkPages(b *testing.B) {
	f := newFixture(b)
	h := f.srv.Handler()
	job := f.jobID()
	for _, p := range []struct{ name, path string }{
		{"overview", "/"},
		{"history", "/jobs/" + job + "/history"},
		{"finding", "/findings/" + f.slow[:12]},
		{"compare", "/compare?job=" + job + "&c=" + f.base + "&c=" + f.head},
		{"api-finding", "/api/findings/" + f.slow[:12]},
		{"style.css", "/static/style.css"},
		{"app.js", "/static/app.js"},
	} {
		b.Run(p.name, func(b *testing.B) {
			var size int
			for b.Loop() {
				code, body := serve(h, p.path)
				if code != 200 {
					b.Fatalf("%s: %d", p.path, code)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "B/page")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func serve(h http.Handler, path string) (int, []byte) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, body
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
