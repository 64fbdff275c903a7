package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/report/doc"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestWatchFindsRegression is issue 8's robot end to end: a real git
// repository whose branch gains commits between cycles, real gcc builds
// and runs; the second cycle tests the new commits beside the last tested
// one, sees the step, triages the culprit, records one finding, exports it
// and mails it through a real SMTP server; a third cycle, as after a
// restart, measures and mails nothing again.
func TestWatchFindsRegression(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C benchmark over three watch cycles")
	}
	testutil.NeedTool(t, "git", "gcc", "make")
	r := testutil.NewGitRepo(t)
	// An unmodified Makefile (gcc by name, no EXTRA_OBJS): triage's layout
	// knobs reach it through the compiler wrappers.
	r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	dir := filepath.Dir(r.Dir)
	jobFile := filepath.Join(dir, "bench.yaml")
	write(t, jobFile, fmt.Sprintf(`repo: %s
build: {command: make bench, artifacts: [bench]}
run: {command: ./bench 1000000, timeout: 60s}
runs: 6
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`, r.Dir))
	box := testutil.StartSMTPServer(t, testutil.SMTPOptions{TLS: "starttls"})
	watchFile := filepath.Join(dir, "watch.yaml")
	write(t, watchFile, fmt.Sprintf(`jobs:
  - {file: bench.yaml, histories: [forced], anchor: true}
branches: [main]
report:
  dir: reports
  smtp: {addr: %q, ca_file: %q, from: perfbot@localhost, to: [perf@example.org], author: true}
`, box.Addr, box.CA.File))
	cfg, err := Load(watchFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w := &Watcher{Config: cfg, CPUMode: "none", Logf: t.Logf}

	// Cycle 1: the history starts at the head.
	rep, err := w.Cycle(ctx)
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("cycle 1: %v %v", err, rep.Errors)
	}
	if len(rep.Tested) != 2 || len(rep.Findings) != 0 {
		t.Fatalf("cycle 1 tested %d commits, %d findings; want the head only, in both histories", len(rep.Tested), len(rep.Findings))
	}

	// The branch gains a no-op, a 2x slowdown, and another no-op.
	docs := r.Commit("docs", map[string]string{"README": "bench\n"})
	slow := r.Commit("hash twice", map[string]string{"bench.c": testutil.BenchC(2, "base")})
	r.Commit("more docs", map[string]string{"README": "bench, twice\n"})

	// Cycle 2 is killed after 5 runs (as by ^C or kill), then run again:
	// it takes only the missing runs and reports once.
	cctx, cancel := context.WithCancel(ctx)
	killed := &Watcher{Config: cfg, CPUMode: "none", Logf: t.Logf, Progress: &cancelAfter{n: 5, cancel: cancel}}
	if _, err := killed.Cycle(cctx); err == nil {
		t.Fatal("a cycle cancelled in the middle returned no error")
	}
	cancel()
	rep, err = w.Cycle(ctx)
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("cycle 2: %v %v", err, rep.Errors)
	}
	// Three commits in each history, plain and forced; the slowdown shows
	// in both, and makes one finding.
	if len(rep.Tested) != 6 || len(rep.Findings) != 2 || rep.Findings[0] != slow || rep.Findings[1] != slow {
		t.Fatalf("cycle 2 tested %d commits, findings %v; want 6 and the slowdown %s in both histories", len(rep.Tested), rep.Findings, slow[:12])
	}
	data, err := os.ReadFile(filepath.Join(dir, "reports", slow[:12]+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f finding.Finding
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if f.Culprit != slow || f.Metric != "work_ms" || f.Verdict != "real-regression" || f.Change < 50 || len(f.Metrics) != 1 {
		t.Errorf("finding %+v: want %s, work_ms, real-regression, about +100%%", f, slow[:12])
	}
	msgs := box.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d mails, want 1", len(msgs))
	}
	m := msgs[0]
	for _, want := range []string{"Subject: [main] " + slow[:12] + ": work_ms +", "regression", "Message-ID: <perfbot." + slow + "@",
		"perfbot noticed a", "verdict: real-regression", "To reproduce:"} {
		if !strings.Contains(m.Data, want) {
			t.Errorf("mail lacks %q:\n%s", want, m.Data)
		}
	}
	if strings.Join(m.To, ",") != "perf@example.org,test@perfbot.invalid" {
		t.Errorf("mail went to %v, want the list and the author", m.To)
	}

	// The history: four tested commits, the step at the slowdown marked
	// with its culprit and verdict, in the plain and the forced history.
	st, err := store.Open(filepath.Join(dir, ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := gitrev.Open(ctx, r.Dir)
	list, _ := repo.FirstParents(ctx, "main", 0)
	jobs, _ := job.Load(jobFile)
	var series *history.Series
	for _, name := range []string{"forced", "plain"} {
		variant, err := history.VariantOf(name, "c", st.Dir())
		if err != nil {
			t.Fatal(err)
		}
		series, err = history.Run(ctx, history.Config{Store: st, JobKey: jobs[0].Key(), JobName: jobs[0].Name, Metric: "work_ms",
			Variant: variant, Commits: list})
		if err != nil {
			t.Fatal(err)
		}
		checkHistory(t, name, series, slow)
	}
	st.Close()
	if lv := series.Points[2].Level / series.Points[1].Level; lv < 1.5 || lv > 2.5 {
		t.Errorf("chained level steps by %.2fx at the slowdown, want about 2x", lv)
	}

	// Cycle 3, a new watcher as after a restart: nothing new to test,
	// nothing reported again.
	w = &Watcher{Config: cfg, CPUMode: "none", Logf: t.Logf}
	rep, err = w.Cycle(ctx)
	if err != nil || len(rep.Tested) != 0 || len(rep.Findings) != 0 {
		t.Errorf("cycle 3 tested %d, findings %v (err %v); want nothing", len(rep.Tested), rep.Findings, err)
	}
	if n := len(box.Messages()); n != 1 {
		t.Errorf("%d mails after the restart, want still 1", n)
	}
	fs, err := cfg.Findings(ctx)
	if err != nil || len(fs) != 1 || fs[0].State != store.Untriaged {
		t.Fatalf("findings %+v, err %v", fs, err)
	}
	if _, err := cfg.SetState(ctx, slow[:9], store.Dismissed, "known, fixed upstream"); err != nil {
		t.Fatal(err)
	}
	if fs, _ := cfg.Findings(ctx); fs[0].State != store.Dismissed || fs[0].Reason != "known, fixed upstream" {
		t.Errorf("after dismiss: %+v", fs[0])
	}
	if l, err := cfg.FindingList(ctx); err != nil || len(l.Jobs) != 1 || l.Jobs[0] != (doc.FindingJob{Job: "bench", Findings: 1, Dismissed: 1}) || len(l.Findings) != 1 {
		t.Errorf("finding list %+v (%v), want bench: 1 finding, 1 dismissed", l, err)
	}

	// A force-push drops the slowdown from the branch: the next cycle
	// withdraws its finding (its runs and state stay).
	r.Git("reset", "-q", "--hard", docs)
	if _, err := w.Cycle(ctx); err != nil {
		t.Fatal(err)
	}
	if fs, _ := cfg.Findings(ctx); !fs[0].Withdrawn || fs[0].State != store.Dismissed {
		t.Errorf("after the force-push: %+v, want withdrawn and still dismissed", fs[0])
	}

	// anchor: true: the base, the history's first commit, is the anchor;
	// a new commit is measured beside its reference and the anchor, and
	// has a ratio to it.
	r.Commit("even more docs", map[string]string{"README": "bench, once\n"})
	rep, err = w.Cycle(ctx)
	if err != nil || len(rep.Errors) > 0 || len(rep.Tested) != 2 {
		t.Fatalf("cycle after the force-push: %v %v, tested %d, want 2", err, rep.Errors, len(rep.Tested))
	}
	st, err = store.Open(filepath.Join(dir, ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if a, err := history.Anchor(ctx, st, jobs[0].Key(), ""); err != nil || a != list[0].Hash {
		t.Fatalf("anchor %q (%v), want the base %s", a, err, list[0].Short())
	}
	list, _ = repo.FirstParents(ctx, "main", 0)
	series, err = history.Run(ctx, history.Config{Store: st, JobKey: jobs[0].Key(), JobName: jobs[0].Name, Metric: "work_ms", Commits: list})
	if err != nil {
		t.Fatal(err)
	}
	last := series.Points[len(series.Points)-1]
	if len(series.Points) != 3 || last.Commit.Subject != "even more docs" || !(last.RatioLo < last.Ratio && last.Ratio < last.RatioHi) ||
		last.Ratio < 0.8 || last.Ratio > 1.25 || series.Points[0].Ratio != 1 {
		t.Errorf("after the force-push, %d points; ratios to the anchor %+v", len(series.Points), series.Points)
	}
}

// checkHistory checks a history of TestWatchFindsRegression's branch, and
// its text and JSON: four tested commits, each median inside its
// interval, the first without a step, the change into the third point
// with the slowdown as its culprit, real-regression, untriaged.
func checkHistory(t *testing.T, name string, s *history.Series, slow string) {
	t.Helper()
	var text, js strings.Builder
	if err := report.WriteHistory(&text, s, report.HistoryOptions{JobName: "bench", History: name, Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s history:\n%s", name, text.String())
	if len(s.Points) != 4 || len(s.Changes) != 1 || s.Changes[0].Index != 2 || !strings.Contains(text.String(), "culprit "+slow[:12]+" real-regression +") {
		t.Fatalf("%s history of %d points, changes %+v:\n%s", name, len(s.Points), s.Changes, text.String())
	}
	if err := report.WriteHistory(&js, s, report.HistoryOptions{Format: "json", JobName: "bench", History: name, Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Job, History, Branch, Metric string
		Points                       []struct {
			Commit   string
			Runs     int
			Median   float64
			MedianLo float64 `json:"median_lo"`
			Step     *float64
		}
		Changes []struct {
			Point    int
			From, To string
			Culprits []struct{ Commit, Verdict, State string }
		}
	}
	if err := json.Unmarshal([]byte(js.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Job != "bench" || doc.History != name || doc.Branch != "main" || doc.Metric != "work_ms" || len(doc.Points) != 4 {
		t.Fatalf("%s history JSON: %s", name, js.String())
	}
	if r := s.Points[2].Ratio; r < 1.5 || r > 2.5 {
		t.Errorf("%s history: the slowdown's ratio to the anchor is %.3g, want about 2", name, r)
	}
	for i, p := range doc.Points {
		if p.Commit != s.Points[i].Commit.Hash || p.Runs < 6 || !(p.MedianLo <= p.Median && p.Median <= s.Points[i].MedianHi && p.MedianLo < s.Points[i].MedianHi) || (p.Step == nil) != (i == 0) {
			t.Errorf("%s history JSON point %d: %+v", name, i, p)
		}
	}
	if c := doc.Changes; len(c) != 1 || c[0].Point != 2 || c[0].To != s.Points[2].Commit.Hash || len(c[0].Culprits) != 1 ||
		c[0].Culprits[0] != (struct{ Commit, Verdict, State string }{slow, "real-regression", "untriaged"}) {
		t.Errorf("%s history JSON changes %+v", name, c)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cancelAfter is a measure.Progress that cancels after n runs.
type cancelAfter struct {
	n, seen int
	cancel  context.CancelFunc
}

func (c *cancelAfter) Building(int, int, measure.Target)                    {}
func (c *cancelAfter) Built(int, int, measure.Target, *build.Result, error) {}
func (c *cancelAfter) Ran(int, int, measure.Target, *store.RunRecord) {
	if c.seen++; c.seen == c.n {
		c.cancel()
	}
}
