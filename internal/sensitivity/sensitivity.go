// Package sensitivity measures how sensitive a job's metrics are to code
// and data layout at one commit, as the seed RFC's tables do: the change
// of each metric when the commit is rebuilt with forced alignment ("netperf
// TCP_CRR [+16.6%, +97.4%]"), the spread of each metric across layouts
// that move code, data and stack, and the size cost of forced alignment
// (text, data, bss and file size). A change of a metric inside its
// sensitivity is suspect before anyone looks at the code.
package sensitivity

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
)

// Result is the sensitivity of a job at one commit.
type Result struct {
	Commit  gitrev.Commit
	Preset  string
	Layouts []string // the layouts' variant names ("" is the plain build)
	Metrics []Metric
	// Sizes are the first artifact's sizes, plain and forced.
	Sizes []Size
	// Table is the measurement: plain, forced, then the layouts.
	Table *compare.Table
}

// Metric is one metric's sensitivity.
type Metric struct {
	Name string
	KPI  bool
	// Forced is the change under forced alignment against the plain
	// build, percent (the paired test's estimate: Hodges-Lehmann on logs),
	// with its interval.
	Forced, ForcedLo, ForcedHi float64
	ForcedSignificant          bool
	// LayoutMin and LayoutMax bound the layouts' changes against the plain
	// build, percent (the plain build is one of them, at 0).
	LayoutMin, LayoutMax float64
}

// Size is one size of the first artifact, plain and under forced
// alignment.
type Size struct {
	Name          string // ".text", ".data", ".bss", "file"
	Plain, Forced uint64
}

// Change is Forced's change in percent.
func (s Size) Change() float64 {
	if s.Plain == 0 {
		return math.NaN()
	}
	return 100 * (float64(s.Forced) - float64(s.Plain)) / float64(s.Plain)
}

// Run resolves the revision, builds it plain, forced and under the
// layouts, measures every build in whole interleaved rounds (pinned as
// cfg.Env says), and returns the sensitivity.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	env, j := cfg.Env, cfg.Job
	c, err := env.Repo.Resolve(ctx, cfg.Rev)
	if err != nil {
		return nil, err
	}
	preset, err := cfg.preset()
	if err != nil {
		return nil, err
	}
	cpu, err := env.Pin(ctx, j, cfg.runs(), stats.DefaultEffectPct)
	if err != nil {
		return nil, err
	}
	forced := preset.ForcedAlignment()
	lays := preset.Layouts(cfg.layouts()) // the first is the plain build
	variants := append([]job.Variant{{}, forced}, lays[1:]...)
	targets := make([]measure.Target, len(variants))
	for i, v := range variants {
		targets[i] = measure.Target{Commit: c, Variant: v}
	}
	opt := env.Options(cpu)
	opt.Runs, opt.WholeRounds, opt.Retry = cfg.runs(), true, true
	out, err := measure.Measure(ctx, j, targets, opt)
	if err != nil {
		return nil, err
	}
	if err := out.BuildErrors(); err != nil {
		return nil, err
	}
	res := &Result{Commit: c, Preset: preset.Name()}
	for i, v := range variants {
		if i != 1 {
			res.Layouts = append(res.Layouts, v.Name)
		}
	}
	if res.Table, err = out.Table(ctx, cfg.alpha()); err != nil {
		return nil, err
	}
	for _, row := range res.Table.Rows {
		m := Metric{Name: row.Metric, KPI: !metric.IsBuiltin(row.Metric)}
		if d := row.Cells[1].Delta; d != nil {
			// The test's estimate, which its interval is about (not the
			// change of the means, the table's %change).
			m.Forced, m.ForcedLo, m.ForcedHi, m.ForcedSignificant = d.Stat.Change, d.Stat.Lo, d.Stat.Hi, d.Stat.Significant
		}
		for k, cell := range row.Cells {
			if k == 1 {
				continue
			}
			ch := 0.0
			if cell.Delta != nil {
				ch = cell.Delta.Change
			}
			m.LayoutMin, m.LayoutMax = math.Min(m.LayoutMin, ch), math.Max(m.LayoutMax, ch)
		}
		res.Metrics = append(res.Metrics, m)
	}
	if len(j.Build.Artifacts) > 0 {
		res.Sizes, err = sizes(out.Targets[0].Build.Record.ArtifactDir, out.Targets[1].Build.Record.ArtifactDir, j.Build.Artifacts[0])
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// sizes compares the section and file sizes of an artifact's two builds.
func sizes(plainDir, forcedDir, artifact string) ([]Size, error) {
	var bins [2]*layout.Binary
	var files [2]uint64
	for i, dir := range []string{plainDir, forcedDir} {
		path := filepath.Join(dir, artifact)
		b, err := layout.Open(path)
		if err != nil {
			return nil, fmt.Errorf("sizes of %s: %w", artifact, err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		bins[i], files[i] = b, uint64(fi.Size())
	}
	var out []Size
	for _, name := range []string{".text", ".rodata", ".data", ".bss"} {
		var s Size
		s.Name = name
		for _, sec := range bins[0].Sections {
			if sec.Name == name {
				s.Plain = sec.Size
			}
		}
		for _, sec := range bins[1].Sections {
			if sec.Name == name {
				s.Forced = sec.Size
			}
		}
		if s.Plain > 0 || s.Forced > 0 {
			out = append(out, s)
		}
	}
	return append(out, Size{Name: "file", Plain: files[0], Forced: files[1]}), nil
}
