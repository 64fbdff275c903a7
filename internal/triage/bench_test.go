package triage

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/verdict"
)

// BenchmarkTriageDemo measures what triage spends on each case of the
// demo's "triage" history, against the fixed design that measures every
// build triage may use 10 times (plain, forced alignment, the first
// sweep's layouts, the restore experiment's three builds), which is what
// an engineer running every experiment by hand would do:
//
//	go test -run '^$' -bench TriageDemo -benchtime 3x ./internal/triage/
//
// Each iteration starts from an empty store. Reported per case: runs/op
// (benchmark runs), builds/op, right (share of right verdicts, no-change
// counting as right for an alignment case whose plain builds measure the
// same, as in TestDemoVerdicts) and ns/op (wall time); the "fixed"
// sub-benchmarks report the same for the fixed design.
func BenchmarkTriageDemo(b *testing.B) {
	testutil.NeedTool(b, "git", "gcc", "make")
	repo, err := demo.Create(filepath.Join(b.TempDir(), "bench"), demo.Options{History: demo.HistoryTriage})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range demoCases {
		b.Run(c.label+"/triage", func(b *testing.B) {
			runs, builds, right := 0, 0, 0
			for i := 0; i < b.N; i++ {
				var log strings.Builder
				res := triageDemo(b, repo, c, filepath.Join(b.TempDir(), "perfbot"), &log)
				b.Logf("%s: %s, %d runs, %v", c.label, res.Verdict, res.Runs, res.Wall.Round(time.Millisecond))
				runs += res.Runs
				builds += res.Builds
				if res.Verdict == c.want || (res.Verdict == verdict.NoChange && plainSame(res) && c.want.IsArtifact()) {
					// Where the alignment shift costs nothing on this
					// CPU (the plain builds measure the same), no-change
					// is right (TestDemoVerdicts).
					right++
				}
			}
			b.ReportMetric(float64(runs)/float64(b.N), "runs/op")
			b.ReportMetric(float64(builds)/float64(b.N), "builds/op")
			b.ReportMetric(float64(right)/float64(b.N), "right")
		})
		b.Run(c.label+"/fixed", func(b *testing.B) {
			runs, builds := 0, 0
			for i := 0; i < b.N; i++ {
				r, n := fixedDesign(b, repo, c, filepath.Join(b.TempDir(), "perfbot"))
				runs += r
				builds += n
			}
			b.ReportMetric(float64(runs)/float64(b.N), "runs/op")
			b.ReportMetric(float64(builds)/float64(b.N), "builds/op")
		})
	}
}

// fixedDesign builds every build a triage may use and measures each 10
// times, interleaved; it returns the runs and builds.
func fixedDesign(b *testing.B, repo *demo.Repo, c demoCase, dir string) (runs, builds int) {
	b.Helper()
	ctx := context.Background()
	jobs, err := job.Load(repo.JobFile)
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	g, err := gitrev.Open(ctx, repo.Dir)
	if err != nil {
		b.Fatal(err)
	}
	base, _ := g.Resolve(ctx, repo.ByLabel(demo.EffectBase).Hash)
	changed, _ := g.Resolve(ctx, repo.ByLabel(c.label).Hash)
	opt := options{Config: Config{Env: measure.Env{Store: st, Repo: g, Builder: &build.Builder{Repo: g, Store: st, Dir: dir}},
		Job: jobs[0], Metric: c.metric}.withDefaults(), CPU: -1}
	p, err := knobs.LookupIn(opt.Preset, knobsDir(st))
	if err != nil {
		b.Fatal(err)
	}
	l, err := newStoreLab(opt, p, base, changed)
	if err != nil {
		b.Fatal(err)
	}
	in, err := l.inspect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	ts := []target{{}, {changed: true}, {setup: alignSetup, variant: p.ForcedAlignment()}, {changed: true, setup: alignSetup, variant: p.ForcedAlignment()}}
	for k, v := range p.Layouts(opt.Layouts)[1:] {
		ts = append(ts, target{setup: layoutSetup, layout: k + 1, variant: v}, target{changed: true, setup: layoutSetup, layout: k + 1, variant: v})
	}
	if in.padding != nil && in.restoreErr == nil {
		ts = append(ts, target{setup: controlSetup, variant: in.control}, target{changed: true, setup: controlSetup, variant: in.control},
			target{changed: true, setup: restoreSetup, variant: in.restore})
	}
	if _, _, err := l.measure(ctx, ts, fixedRunsPerBuild, true); err != nil {
		b.Fatal(err)
	}
	return l.taken, len(l.builds)
}
