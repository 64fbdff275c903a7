package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
	"github.com/perfbot/perfbot/internal/testutil"
)

// summ returns a summary of n runs around mean with the given relative
// standard deviation (percent): median = mean, CI ±relsd/2.
func summ(n int, mean, relsd float64) stats.Summary {
	sd := math.Abs(mean) * relsd / 100
	s := stats.Summary{
		N: n, Mean: mean, Stddev: sd, RelStddev: relsd,
		Median: mean, Min: mean - 1.5*sd, Max: mean + 1.5*sd,
		Lo: mean - sd/2, Hi: mean + sd/2,
	}
	if n < 6 { // too few for a 95 % interval: stats.Summary has none
		s.Lo, s.Hi = mean, mean
	}
	return s
}

// test returns a statistical comparison at alpha 0.05.
func test(name string, n int, p, change, lo, hi float64) stats.Comparison {
	return stats.Comparison{
		Test: name, N: n, P: p, Change: change, Lo: lo, Hi: hi,
		Confidence: 0.95, Alpha: 0.05, Significant: p < 0.05,
	}
}

// cell builds a non-base cell the way package compare does: the change
// of means (points for % stats), regression and improvement from the
// test's significance and the row's direction.
func cell(r compare.Row, s stats.Summary, st stats.Comparison, lkp bool) compare.Cell {
	base := r.Cells[0].Summary
	d := &compare.Delta{Stat: st, LKPChanged: lkp}
	if r.Points {
		d.Change = s.Mean - base.Mean
	} else {
		d.Change = 100 * (s.Mean - base.Mean) / base.Mean
	}
	if st.Significant {
		dir := float64(r.Better) * (st.Change)
		d.Regression, d.Improvement = dir < 0, dir > 0
	}
	return compare.Cell{Summary: s, Delta: d}
}

// row starts a row with its base cell.
func row(name, unit string, better metric.Better, base stats.Summary) compare.Row {
	return compare.Row{
		Metric: name, Unit: unit, Better: better, KPI: true,
		Points: strings.HasSuffix(name, "%"),
		Cells:  []compare.Cell{{Summary: base}},
	}
}

func add(r compare.Row, s stats.Summary, st stats.Comparison, lkp bool) compare.Row {
	r.Cells = append(r.Cells, cell(r, s, st, lkp))
	return r
}

// seedTable is the three-column table of the data alignment seed
// (shared/seeds/data-alignment-regression-report.txt): base, culprit
// 6613d82e61 and the culprit with a padding variable restoring the layout.
func seedTable() *compare.Table {
	ops := row("stress-ng.mutex.ops_per_sec", "ops/s", metric.HigherIsBetter, summ(10, 302318.4, 0.6))
	ops = add(ops, summ(10, 278364.2, 0.8), test("wilcoxon", 10, 0.002, -7.9, -9.1, -6.7), true)
	ops = add(ops, summ(10, 303161.7, 0.5), test("wilcoxon", 10, 0.31, 0.3, -0.4, 0.9), false)
	return &compare.Table{
		Columns: []compare.Column{
			{ID: "a0e2dab44d22b913", Runs: 10},
			{ID: "6613d82e617dd7eb8b0c40b2fe3acea655b1d611", Subject: "x86/bugs: Use ALTERNATIVE() instead of mds_user_clear static key", Runs: 10},
			{ID: "398e7f0da8595354dc330938831", Subject: "debug: restore the .bss layout with test_static_key", Runs: 10},
		},
		Rows:   []compare.Row{ops},
		Paired: true,
		Alpha:  0.05,
	}
}

// seedEmailTable is the two-column table of the 0-day email quoted in
// the same seed.
func seedEmailTable() *compare.Table {
	ops := row("stress-ng.mutex.ops_per_sec", "ops/s", metric.HigherIsBetter, summ(6, 302318.4, 0.6))
	ops = add(ops, summ(6, 278364.2, 0.8), test("mann-whitney", 6, 0.002, -7.8, -8.9, -6.6), true)
	ns := row("stress-ng.mutex.nanosecs_per_mutex", "ns", metric.LowerIsBetter, summ(6, 182670.5, 0.7))
	ns = add(ns, summ(6, 199032.9, 0.9), test("mann-whitney", 6, 0.002, 9.0, 7.6, 10.2), true)
	return &compare.Table{
		Columns: []compare.Column{
			{ID: "a0e2dab44d22b913", Runs: 6},
			{ID: "6613d82e617dd7eb8b0c40b2fe3acea655b1d611", Runs: 6},
		},
		Rows:  []compare.Row{ops, ns},
		Alpha: 0.05,
	}
}

// priorArtTable is the ncompare example of shared/notes/prior-art.md.
func priorArtTable() *compare.Table {
	tp := row("unixbench.throughput", "ops/s", metric.HigherIsBetter, summ(6, 96583240.5, 0.4))
	tp = add(tp, summ(6, 95127283.9, 0.5), test("mann-whitney", 6, 0.004, -1.5, -2.0, -1.1), true)
	// ±2.4 % and ±2.9 %: lkp prints the integer part, " ±  2%".
	br := row("perf-stat.i.branch-miss-rate%", "%", metric.LowerIsBetter, summ(6, 0.3712, 2.4))
	br = add(br, summ(6, 0.4151, 2.9), test("mann-whitney", 6, 0.002, 11.8, 9.0, 14.1), true)
	return &compare.Table{
		Columns: []compare.Column{
			{ID: "800a83311219f2ca", Runs: 6},
			{ID: "0dd26047b0b803f7a196f0aee91", Runs: 6},
		},
		Rows:  []compare.Row{tp, br},
		Alpha: 0.05,
	}
}

// failuresTable has failed runs, an improvement, a regression, a
// lkp-only change and unchanged rows.
func failuresTable() *compare.Table {
	wall := row("wall", "s", metric.LowerIsBetter, summ(6, 12.5, 1.1))
	wall = add(wall, summ(4, 11.25, 0.9), test("mann-whitney", 4, 0.011, -10.1, -11.5, -8.7), true)
	rss := row("max_rss", "KiB", metric.LowerIsBetter, summ(6, 20480, 0.1))
	rss = add(rss, summ(4, 20484, 0.1), test("mann-whitney", 4, 0.66, 0.02, -0.1, 0.1), false)
	qps := row("bench.qps", "ops/s", metric.HigherIsBetter, summ(6, 5120.7, 1.5))
	qps = add(qps, summ(4, 4830.2, 4.5), test("mann-whitney", 4, 0.038, -5.4, -9.8, -0.6), true)
	lat := row("bench.p99_latency", "ms", metric.LowerIsBetter, summ(6, 3.12, 9.5))
	lat = add(lat, summ(4, 3.61, 12.0), test("mann-whitney", 4, 0.11, 14.2, -3.1, 33.0), true)
	lat.KPI = true
	return &compare.Table{
		Columns: []compare.Column{
			{ID: "1d2859b4fa79a8e2d0c1f5ad0b9d5e2f8e9e7c11", Subject: "base", Runs: 6},
			{ID: "609a86901e6fd886f1139aed8f8c4b7d9a2e1f30", Subject: "use a `faster` *hash* | maybe", Variant: "falign64", Runs: 6, Failed: 2},
		},
		Rows:  []compare.Row{wall, rss, qps, lat},
		Alpha: 0.05,
	}
}

// edgeTable exercises number formatting: zero, negative, rounding to
// 1000, %.4g, huge changes, NaN, ±Inf, a missing cell, relative standard
// deviations around lkp's "above 2" rule.
func edgeTable() *compare.Table {
	nan, inf := math.NaN(), math.Inf(1)
	none := stats.Comparison{}
	z := row("zero", "", metric.LowerIsBetter, summ(3, 0, 0))
	z = add(z, summ(3, 0, 0), none, false)
	z.Cells[1].Delta.Change = nan
	neg := row("negative", "", metric.HigherIsBetter, summ(3, -5.5, 10))
	neg = add(neg, summ(3, -7.25, 10), none, false)
	near := row("rounds.to.1000", "", metric.LowerIsBetter, summ(5, 999.999, 0))
	near = add(near, summ(5, 1000, 0), none, false)
	neg1000 := row("negative.big", "", metric.LowerIsBetter, summ(5, -123456.78, 0))
	neg1000 = add(neg1000, summ(5, -99999999.9, 0), none, false)
	big := row("big", "", metric.LowerIsBetter, summ(5, 1e9, 0))
	big = add(big, summ(5, 1.23456789e9, 0), none, false)
	huge := row("huge.change", "", metric.HigherIsBetter, summ(5, 1, 0))
	huge = add(huge, summ(5, 2000, 0), test("mann-whitney", 5, 0.0004, 199900, 150000, 260000), true)
	huge.Better = 0 // unknown direction: a "change"
	huge.Cells[1].Delta.Regression, huge.Cells[1].Delta.Improvement = false, false
	infs := row("infinite", "", metric.LowerIsBetter, summ(5, 1, 0))
	infs = add(infs, summ(5, inf, 0), none, false)
	infs.Cells[1].Delta.Change = inf
	gone := row("missing", "", metric.LowerIsBetter, summ(5, 42, 0))
	gone.Cells = append(gone.Cells, compare.Cell{})
	single := row("single.run", "", metric.LowerIsBetter, stats.Summary{N: 1, Mean: 7, Median: 7, Min: 7, Max: 7, Lo: 7, Hi: 7})
	single = add(single, stats.Summary{N: 1, Mean: 8, Median: 8, Min: 8, Max: 8, Lo: 8, Hi: 8}, none, false)
	noisy := row("noisy", "", metric.LowerIsBetter, summ(6, 100, 2.0))
	noisy = add(noisy, summ(6, 100, 2.01), none, false)
	noisier := row("noisier", "", metric.LowerIsBetter, summ(6, 100, 150.7))
	noisier = add(noisier, summ(6, 100, 1234.5), none, false)
	pts := row("rate%", "%", metric.LowerIsBetter, summ(6, 3.5, 1))
	pts = add(pts, summ(6, 2.25, 1), none, false)
	return &compare.Table{
		Columns: []compare.Column{{ID: "base.txt", Runs: 6}, {ID: "new.txt", Runs: 6}},
		Rows:    []compare.Row{z, neg, near, neg1000, big, huge, infs, gone, single, noisy, noisier, pts},
		Alpha:   0.05,
	}
}

// benchTable reads Go benchmark files with benchfmt and summarizes and
// compares them with benchmath exactly as benchstat does, so that
// WriteBenchstat can be checked against benchstat's own output.
func benchTable(t *testing.T, files ...string) *compare.Table {
	t.Helper()
	type key struct{ name, unit string }
	var keys []key
	samples := make(map[key][][]float64)
	var cols []compare.Column
	for i, name := range files {
		f, err := os.Open(filepath.Join("testdata", "benchstat", name))
		if err != nil {
			t.Fatal(err)
		}
		r := benchfmt.NewReader(f, name)
		for r.Scan() {
			res, ok := r.Result().(*benchfmt.Result)
			if !ok {
				t.Fatalf("%s: %v", name, r.Result())
			}
			for _, v := range res.Values {
				val, unit := v.Value, v.Unit
				if v.OrigUnit != "" {
					// Keep the file's unit: WriteBenchstat tidies.
					val, unit = v.OrigValue, v.OrigUnit
				}
				k := key{string(res.Name), unit}
				if samples[k] == nil {
					keys = append(keys, k)
					samples[k] = make([][]float64, len(files))
				}
				samples[k][i] = append(samples[k][i], val)
			}
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		cols = append(cols, compare.Column{ID: name, Runs: 10})
	}
	tab := &compare.Table{Columns: cols, Alpha: 0.05}
	for _, k := range keys {
		r := compare.Row{Metric: k.name, Unit: k.unit, Better: metric.LowerIsBetter}
		var base *benchmath.Sample
		for i, xs := range samples[k] {
			sample := benchmath.NewSample(xs, &benchmath.DefaultThresholds)
			bs := benchmath.AssumeNothing.Summary(sample, 0.95)
			var s stats.Summary
			s.N = len(xs)
			for _, x := range xs {
				s.Mean += x / float64(len(xs))
			}
			s.Median, s.Lo, s.Hi = bs.Center, bs.Lo, bs.Hi
			s.Min, s.Max = sample.Values[0], sample.Values[len(xs)-1]
			if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) {
				s.Lo, s.Hi = s.Median, s.Median // as stats.Summary has it
			}
			s.Warnings = append(append(s.Warnings, sample.Warnings...), bs.Warnings...)
			c := compare.Cell{Samples: xs, Summary: s}
			if i == 0 {
				base = sample
			} else {
				bc := benchmath.AssumeNothing.Compare(base, sample)
				st := stats.Comparison{
					Test: "mann-whitney", N: min(bc.N1, bc.N2), P: bc.P, Alpha: bc.Alpha,
					Significant: bc.P < bc.Alpha, Warnings: bc.Warnings,
				}
				b := r.Cells[0].Summary
				c.Delta = &compare.Delta{Change: 100 * (s.Mean - b.Mean) / b.Mean, Stat: st}
			}
			r.Cells = append(r.Cells, c)
		}
		tab.Rows = append(tab.Rows, r)
	}
	return tab
}

var cases = []struct {
	name  string
	table func() *compare.Table
	all   bool
}{
	{"seed", seedTable, false},
	{"seed-email", seedEmailTable, false},
	{"prior-art", priorArtTable, false},
	{"failures", failuresTable, false},
	{"failures-all", failuresTable, true},
	{"edge", edgeTable, true},
}

func TestGolden(t *testing.T) {
	for _, c := range cases {
		for _, format := range Formats {
			t.Run(c.name+"-"+string(format), func(t *testing.T) {
				var b bytes.Buffer
				if err := Write(&b, c.table(), Options{All: c.all, Format: format}); err != nil {
					t.Fatal(err)
				}
				testutil.Golden(t, filepath.Join("testdata", c.name+"-"+string(format)+".golden"), b.Bytes())
			})
		}
	}
}

// ncompare runs WriteNCompare and returns its lines.
func ncompare(t *testing.T, tab *compare.Table, all bool) []string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteNCompare(&b, tab, Options{All: all}); err != nil {
		t.Fatal(err)
	}
	return strings.Split(b.String(), "\n")
}

// contains checks that want appear in lines, in order (not necessarily
// adjacent).
func contains(t *testing.T, lines, want []string) {
	t.Helper()
	i := 0
	for _, l := range lines {
		if i < len(want) && l == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("line %q not found in order in\n%s", want[i], strings.Join(lines, "\n"))
	}
}

func TestNCompareSeedLines(t *testing.T) {
	// The lines of shared/seeds/data-alignment-regression-report.txt, as
	// lkp printed them: the email indents the header lines by three
	// spaces (removed here; lkp's trailing space is kept), the quoted
	// report line sits behind "> > ".
	contains(t, ncompare(t, seedTable(), false), []string{
		"a0e2dab44d22b913 6613d82e617dd7eb8b0c40b2fe3 398e7f0da8595354dc330938831 ",
		"---------------- --------------------------- --------------------------- ",
		"    302318            -7.9%     278364            +0.3%     303161        stress-ng.mutex.ops_per_sec",
	})
	contains(t, ncompare(t, seedEmailTable(), false), []string{
		"    182670            +9.0%     199032        stress-ng.mutex.nanosecs_per_mutex",
	})
}

func TestNCompareSignificantSection(t *testing.T) {
	lines := ncompare(t, seedTable(), false)
	contains(t, lines, []string{
		"",
		"significant changes (p < 0.05):",
		"  6613d82e617d  regression  -7.9%, 95% CI [-9.1%, -6.7%], p=0.002, wilcoxon n=10  stress-ng.mutex.ops_per_sec",
	})
	// The padded column is not significant: no line for it.
	for _, l := range lines[3:] {
		if strings.Contains(l, "398e7f0da859") {
			t.Errorf("not significant but listed: %q", l)
		}
	}
}

func TestNComparePriorArtLines(t *testing.T) {
	// prior-art.md quotes the table without lkp's trailing spaces.
	lines := ncompare(t, priorArtTable(), false)
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	contains(t, lines, []string{
		"800a83311219f2ca 0dd26047b0b803f7a196f0aee91",
		"---------------- ---------------------------",
		"         %stddev     %change         %stddev",
		`             \          |                \`,
		"  96583240            -1.5%   95127283        unixbench.throughput",
		"      0.37 ±  2%      +0.0        0.42 ±  2%  perf-stat.i.branch-miss-rate%",
	})
}

func TestNCompareFailures(t *testing.T) {
	// The layout of lkp's failure stats, as in 0-day emails such as
	// "           :6          100%           6:6     dmesg.RIP:do_swap_page".
	contains(t, ncompare(t, failuresTable(), false), []string{
		"       fail:runs  %reproduction    fail:runs",
		"           |             |             |    ",
		"           :6           33%           2:6     " + FailedRunsStat,
		"         %stddev     %change         %stddev",
	})
}

func TestNCompareChangedOnly(t *testing.T) {
	out := strings.Join(ncompare(t, failuresTable(), false), "\n")
	if strings.Contains(out, "max_rss") {
		t.Errorf("unchanged row max_rss printed without All:\n%s", out)
	}
	for _, m := range []string{"wall", "bench.qps", "bench.p99_latency"} {
		if !strings.Contains(out, "  "+m+"\n") {
			t.Errorf("changed row %s missing:\n%s", m, out)
		}
	}
	out = strings.Join(ncompare(t, failuresTable(), true), "\n")
	if !strings.Contains(out, "  max_rss\n") {
		t.Errorf("All did not print max_rss:\n%s", out)
	}
}

func TestLKPNumbers(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{0, "      0.00"},
		{-0.001, "     -0.00"},
		{-5.5, "     -5.50"},
		{0.37, "      0.37"},
		{999.994, "    999.99"},
		{999.999, "   1000.00"}, // |x| < 1000 decides, before rounding
		{1000, "      1000"},
		{302318.9, "    302318"}, // truncated, as Ruby's "%d" of a Float
		{-123456.78, "   -123456"},
		{1e8, " 100000000"}, // > 1e8 takes %.4g, 1e8 itself does not
		{1e9, "     1e+09"},
		{1.23456789e9, " 1.235e+09"},
		{-2e10, "    -2e+10"},
		{math.NaN(), "       NaN"},
		{math.Inf(1), "       Inf"},
		{math.Inf(-1), "      -Inf"},
	} {
		if got := lkpValue(c.x); got != c.want {
			t.Errorf("lkpValue(%v) = %q, want %q", c.x, got, c.want)
		}
	}
	for _, c := range []struct {
		p      float64
		points bool
		want   string
	}{
		{-7.92, false, "      -7.9% "},
		{0.279, false, "      +0.3% "},
		{0, false, "      +0.0% "},
		{-0.04, false, "      -0.0% "},
		{0.0439, true, "      +0.0  "},
		{-1.25, true, "      -1.2  "}, // half to even, as C's printf
		{99999.9, false, "  +99999.9% "},
		{199900, false, "    +2e+05% "},
		{math.Inf(1), false, "      +Inf% "},
		{math.NaN(), true, "       NaN  "},
	} {
		if got := lkpChange(c.p, c.points); got != c.want {
			t.Errorf("lkpChange(%v, %v) = %q, want %q", c.p, c.points, got, c.want)
		}
	}
	for _, c := range []struct {
		rel  float64
		n    int
		want string
		ok   bool
	}{
		{2.0, 6, "", false},
		{2.01, 6, "2", true},
		{2.99, 6, "2", true},
		{5, 1, "", false},
		{math.NaN(), 6, "", false},
		{math.Inf(1), 6, "", false},
		{1234.5, 6, "1234", true},
	} {
		sd, ok := relStddev(stats.Summary{N: c.n, RelStddev: c.rel})
		if ok != c.ok || (ok && strconv.FormatInt(sd, 10) != c.want) {
			t.Errorf("relStddev(%v, n=%d) = %d, %v; want %s, %v", c.rel, c.n, sd, ok, c.want, c.ok)
		}
	}
}

func TestNoGarbage(t *testing.T) {
	// No format prints Go's "%!" verbs errors or raw NaN in JSON.
	for _, c := range cases {
		for _, format := range Formats {
			var b bytes.Buffer
			if err := Write(&b, c.table(), Options{All: true, Format: format}); err != nil {
				t.Fatalf("%s %s: %v", c.name, format, err)
			}
			if s := b.String(); strings.Contains(s, "%!") {
				t.Errorf("%s %s: fmt error in output:\n%s", c.name, format, s)
			}
		}
	}
}

func TestBenchstatMatchesBenchstat(t *testing.T) {
	// The .benchstat files are the output of golang.org/x/perf/cmd/benchstat
	// (the version in go.mod) on the same files.
	for _, files := range [][]string{
		{"old.txt"},
		{"old.txt", "new.txt"},
		{"old.txt", "new.txt", "new2.txt"},
	} {
		name := strings.Join(files, "-")
		name = strings.ReplaceAll(name, ".txt", "") + ".benchstat"
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "benchstat", name))
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := WriteBenchstat(&b, benchTable(t, files...), Options{}); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != string(want) {
				t.Errorf("differs from benchstat:\n--- got\n%s--- benchstat\n%s", got, want)
			}
		})
	}
}

// jsonDoc mirrors the documented JSON fields, for reading them back.
type jsonDoc struct {
	Job          string   `json:"job"`
	JobKey       string   `json:"job_key"`
	Alpha        *float64 `json:"alpha"`
	EffectPct    float64  `json:"effect_pct"`
	Paired       bool     `json:"paired"`
	Regressions  int      `json:"regressions"`
	Improvements int      `json:"improvements"`
	Columns      []struct {
		ID, Subject, Variant string
		Runs, Failed         int
	} `json:"columns"`
	Metrics []struct {
		Metric, Unit, Better string
		KPI, Points, Changed bool
		Summaries            []jsonSummaryDoc `json:"summaries"`
		Comparisons          []struct {
			Column                               int
			ColumnID                             string `json:"column_id"`
			Base, New                            jsonSummaryDoc
			Change                               *float64
			ChangeUnit                           string   `json:"change_unit"`
			StatChange                           *float64 `json:"stat_change"`
			CILo                                 *float64 `json:"ci_lo"`
			CIHi                                 *float64 `json:"ci_hi"`
			Confidence, P                        *float64
			Test                                 string
			N                                    int
			Significant, Regression, Improvement bool
			LKPChanged                           bool `json:"lkp_changed"`
			Warnings                             []string
		} `json:"comparisons"`
	} `json:"metrics"`
}

type jsonSummaryDoc struct {
	N                    int
	Mean, Median, Stddev *float64
	RelStddev            *float64 `json:"rel_stddev"`
	Min, Max             *float64
	CILo                 *float64 `json:"ci_lo"`
	CIHi                 *float64 `json:"ci_hi"`
	Samples              []*float64
}

func TestJSONParsesBack(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, seedTable(), Options{}); err != nil {
		t.Fatal(err)
	}
	var top struct {
		Version, Regressions, Improvements int
		Tables                             []jsonDoc
	}
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&top); err != nil {
		t.Fatal(err)
	}
	if top.Version != 2 || len(top.Tables) != 1 || top.Regressions != 1 || top.Tables[0].Job != "" {
		t.Fatalf("document = version %d, %d regressions, %d tables", top.Version, top.Regressions, len(top.Tables))
	}
	doc := top.Tables[0]
	if *doc.Alpha != 0.05 || !doc.Paired || doc.Regressions != 1 || doc.Improvements != 0 {
		t.Errorf("header = %+v", doc)
	}
	if len(doc.Columns) != 3 || doc.Columns[1].ID != "6613d82e617dd7eb8b0c40b2fe3acea655b1d611" || doc.Columns[2].Runs != 10 {
		t.Errorf("columns = %+v", doc.Columns)
	}
	if len(doc.Metrics) != 1 || len(doc.Metrics[0].Comparisons) != 2 || len(doc.Metrics[0].Summaries) != 3 {
		t.Fatalf("metrics = %+v", doc.Metrics)
	}
	m := doc.Metrics[0]
	c := m.Comparisons[0]
	if m.Better != "higher" || !m.Changed || c.Column != 1 || c.Test != "wilcoxon" || c.N != 10 ||
		!c.Significant || !c.Regression || c.Improvement || !c.LKPChanged || c.ChangeUnit != "%" {
		t.Errorf("comparison = %+v", c)
	}
	if math.Abs(*c.Change-(-7.9234)) > 1e-3 || *c.CILo != -9.1 || *c.CIHi != -6.7 || *c.P != 0.002 || *c.Confidence != 0.95 {
		t.Errorf("figures = change %v ci [%v, %v] p %v conf %v", *c.Change, *c.CILo, *c.CIHi, *c.P, *c.Confidence)
	}
	if c.Base.N != 10 || *c.Base.Mean != 302318.4 || *c.New.Mean != 278364.2 {
		t.Errorf("summaries = %+v / %+v", c.Base, c.New)
	}

	// NaN, ±Inf and missing figures come back as null.
	b.Reset()
	if err := WriteJSON(&b, edgeTable(), Options{}); err != nil {
		t.Fatal(err)
	}
	top.Tables = nil
	if err := json.Unmarshal(b.Bytes(), &top); err != nil || len(top.Tables) != 1 {
		t.Fatalf("%v in\n%s", err, b.String())
	}
	doc = top.Tables[0]
	byName := make(map[string]int)
	for i, m := range doc.Metrics {
		byName[m.Metric] = i
	}
	if c := doc.Metrics[byName["zero"]].Comparisons[0]; c.Change != nil || c.P != nil || c.Test != "" {
		t.Errorf("zero: change %v p %v test %q, want null null \"\"", c.Change, c.P, c.Test)
	}
	if c := doc.Metrics[byName["infinite"]].Comparisons[0]; c.Change != nil || c.New.Mean != nil || c.New.N != 5 {
		t.Errorf("infinite: change %v new mean %v", c.Change, c.New.Mean)
	}
	if c := doc.Metrics[byName["missing"]].Comparisons[0]; c.Change != nil || c.New.N != 0 || c.New.Mean != nil {
		t.Errorf("missing: %+v", c)
	}
	if c := doc.Metrics[byName["rate%"]].Comparisons[0]; c.ChangeUnit != "points" || *c.Change != -1.25 {
		t.Errorf("rate%%: unit %q change %v", c.ChangeUnit, *c.Change)
	}
}

func TestCSVParses(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, seedTable(), Options{}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want header + 2", len(recs))
	}
	field := make(map[string]int)
	for i, h := range recs[0] {
		field[h] = i
	}
	for _, h := range []string{"metric", "column_id", "base_mean", "new_mean", "change", "ci_lo", "ci_hi", "p", "test", "significant", "regression", "improvement", "lkp_changed"} {
		if _, ok := field[h]; !ok {
			t.Errorf("no field %q in header %q", h, recs[0])
		}
	}
	r := recs[1]
	if r[field["metric"]] != "stress-ng.mutex.ops_per_sec" || r[field["column_id"]] != "6613d82e617dd7eb8b0c40b2fe3acea655b1d611" ||
		r[field["base_mean"]] != "302318.4" || r[field["new_mean"]] != "278364.2" || r[field["ci_lo"]] != "-9.1" ||
		r[field["p"]] != "0.002" || r[field["test"]] != "wilcoxon" || r[field["regression"]] != "true" || r[field["lkp_changed"]] != "true" {
		t.Errorf("record = %q", r)
	}
	if r := recs[2]; r[field["significant"]] != "false" || r[field["lkp_changed"]] != "false" {
		t.Errorf("record 2 = %q", r)
	}

	// Every line has the header's field count, also with NaN and Inf.
	b.Reset()
	if err := WriteCSV(&b, edgeTable(), Options{}); err != nil {
		t.Fatal(err)
	}
	recs, err = csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+len(edgeTable().Rows) {
		t.Errorf("%d records for %d rows", len(recs), len(edgeTable().Rows))
	}
	for _, r := range recs {
		if r[0] == "zero" && r[field["change"]] != "" {
			t.Errorf("NaN change printed as %q", r[field["change"]])
		}
		if r[0] == "infinite" && r[field["change"]] != "+Inf" {
			t.Errorf("Inf change printed as %q", r[field["change"]])
		}
	}
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, failuresTable(), Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	first, _, _ := strings.Cut(out, "\n")
	if first != "**1 regression**, 1 improvement, 2 unchanged (p < 0.05)" {
		t.Errorf("summary line = %q", first)
	}
	for _, want := range []string{
		"| **`bench.qps`** | 5120 | 4830 ±4% | **-5.7%** regression | [-9.8%, -0.6%] | 0.038 |",
		"| `wall` | 12.50 | 11.25 | -10.0% improvement | [-11.5%, -8.7%] | 0.011 |",
		"`609a86901e6f/falign64` (use a \\`faster\\` \\*hash\\* \\| maybe) vs base `1d2859b4fa79`:",
		"Failed runs: `1d2859b4fa79` 0 of 6, `609a86901e6f/falign64` 2 of 6.",
		"1 unchanged metric not shown.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "max_rss") {
		t.Errorf("unchanged max_rss shown without All:\n%s", out)
	}
	if got := code("a|b`c"); got != "``a\\|b`c``" {
		t.Errorf("code = %q", got)
	}
}

func TestWriteDispatch(t *testing.T) {
	var def, nc bytes.Buffer
	if err := Write(&def, seedTable(), Options{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteNCompare(&nc, seedTable(), Options{}); err != nil {
		t.Fatal(err)
	}
	if def.String() != nc.String() {
		t.Errorf("default format is not ncompare")
	}
	err := Write(&def, seedTable(), Options{Format: "html"})
	if err == nil || !strings.Contains(err.Error(), `"html"`) || !strings.Contains(err.Error(), "ncompare, benchstat, json, csv, markdown") {
		t.Errorf("unknown format error = %v", err)
	}
}

func TestBadTables(t *testing.T) {
	short := seedTable()
	short.Rows[0].Cells = short.Rows[0].Cells[:2]
	for _, c := range []struct {
		desc string
		tab  *compare.Table
		want string
	}{
		{"nil table", nil, "no table"},
		{"no columns", &compare.Table{}, "no columns"},
		{"cells do not match columns", short, `row 1 ("stress-ng.mutex.ops_per_sec") has 2 cells for 3 columns`},
	} {
		for _, format := range Formats {
			err := Write(&bytes.Buffer{}, c.tab, Options{Format: format})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), string(format)) {
				t.Errorf("%s, %s: error %v, want one naming %s and %q", c.desc, format, err, format, c.want)
			}
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrors(t *testing.T) {
	for _, format := range Formats {
		if err := Write(failWriter{}, seedTable(), Options{Format: format}); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s: error %v, want disk full", format, err)
		}
	}
}

func TestSummary(t *testing.T) {
	for _, c := range []struct {
		tab      *compare.Table
		reg, imp int
	}{
		{seedTable(), 1, 0},
		{seedEmailTable(), 2, 0},
		{failuresTable(), 1, 1},
		{edgeTable(), 0, 0},
		{nil, 0, 0},
	} {
		if reg, imp := Summary(c.tab); reg != c.reg || imp != c.imp {
			t.Errorf("Summary = %d, %d; want %d, %d", reg, imp, c.reg, c.imp)
		}
	}
}

func TestPctRange(t *testing.T) {
	for _, c := range []struct {
		s    stats.Summary
		want string
	}{
		{stats.Summary{N: 10, Median: 100, Lo: 98, Hi: 105}, "5%"},
		// benchmath prints "-5%" for a negative center; the distance is 5 %.
		{stats.Summary{N: 10, Median: -100, Lo: -105, Hi: -98}, "5%"},
		{stats.Summary{N: 10, Median: 1, Lo: -1, Hi: 2}, "?"},
		{stats.Summary{N: 10, Median: 0, Lo: 0, Hi: 0}, "0%"},
		{stats.Summary{N: 5, Median: 3, Lo: 3, Hi: 3}, "∞"},
		{stats.Summary{N: 5, Median: 3, Lo: math.Inf(-1), Hi: math.Inf(1)}, "∞"},
	} {
		if got := pctRange(c.s); got != c.want {
			t.Errorf("pctRange(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
}

// TestNCompareMachines: a table whose runs come from several machines says
// so in its notes (the machine is a block); one machine adds no note.
func TestNCompareMachines(t *testing.T) {
	tab := failuresTable()
	tab.Columns[0].Machines = []string{"bench-1"}
	tab.Columns[1].Machines = []string{"bench-1", "bench-2"}
	contains(t, ncompare(t, tab, false), []string{
		"notes:",
		"  runs from 2 machines (bench-1, bench-2): runs pair only within a machine (the machine is a block); medians mix the machines' speeds",
	})
	tab.Columns[1].Machines = []string{"bench-1"}
	if out := strings.Join(ncompare(t, tab, false), "\n"); strings.Contains(out, "machines (") {
		t.Errorf("one machine, yet a machines note:\n%s", out)
	}
}
