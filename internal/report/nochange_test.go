package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// quietTable: 12 interleaved rounds of two metrics that did not change
// (the same values in both columns, 0.1 % noise), and a third column that
// was not measured because only ignored paths changed.
func quietTable() *compare.Table {
	var s [][]compare.Sample
	for range 2 {
		var col []compare.Sample
		for i := range 12 {
			col = append(col, compare.Sample{Pair: compare.Pair{Round: i + 1}, Value: 100 + float64(i%3-1)*0.1})
		}
		s = append(s, col)
	}
	t := compare.Build([]compare.Column{{ID: "aaaaaaaaaaaa", Runs: 12}, {ID: "bbbbbbbbbbbb", Runs: 12, Identical: true}, {ID: "cccccccccccc", Unchanged: "only ignored paths changed: README.md"}}, []compare.Series{
		{Metric: "work_ms", Better: metric.LowerIsBetter, KPI: true, Samples: [][]compare.Sample{s[0], s[1], nil}},
		{Metric: "rss_kb", Better: metric.LowerIsBetter, KPI: true, Samples: [][]compare.Sample{s[0], s[1], nil}},
	}, true, 0.05)
	t.EffectPct = 5
	return t
}

// TestNoChangeLine: a comparison in which nothing changed says so in one
// line on top of ncompare and markdown and in the JSON's verdict, and
// names the revision that was not measured and the one whose artifacts
// were identical; a table with a change that counts has no such line.
func TestNoChangeLine(t *testing.T) {
	tab := quietTable()
	want := "no change: 2 metrics within noise; smallest change that counts 5 %; not measured, 0 runs: cccccccccccc (only ignored paths changed: README.md)"
	if got := NoChange(tab); got != want {
		t.Fatalf("NoChange = %q\nwant       %q", got, want)
	}
	for _, f := range []Format{FormatNCompare, FormatMarkdown, FormatBenchstat, FormatJSON} {
		var b bytes.Buffer
		if err := Write(&b, tab, Options{Format: f}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if (f == FormatNCompare || f == FormatMarkdown) && !strings.HasPrefix(strings.TrimPrefix(out, "**"), "no change: 2 metrics") {
			t.Errorf("%s does not start with the verdict:\n%s", f, out)
		}
		if f != FormatJSON && (!strings.Contains(out, "cccccccccccc: unchanged, 0 runs: only ignored paths changed: README.md") ||
			!strings.Contains(out, "bbbbbbbbbbbb: the builds' artifacts are byte-identical; a script or data file outside them may still matter")) {
			t.Errorf("%s lacks the column notes:\n%s", f, out)
		}
		if f == FormatJSON {
			schematest.ValidateJSON(t, "compare", b.Bytes())
			for _, s := range []string{`"verdict": "no change: 2 metrics`, `"unchanged": "only ignored paths changed: README.md"`, `"identical": true`} {
				if !strings.Contains(out, s) {
					t.Errorf("json lacks %s:\n%s", s, out)
				}
			}
		}
	}
	if got := NoChange(smallTable(1)); got != "" {
		t.Errorf("a 2 %% regression that counts under a 1 %% effect: NoChange = %q, want none", got)
	}
	if got := NoChange(smallTable(5)); !strings.HasPrefix(got, "no change that counts: 1 metric, 1 shown as changed but not significant beyond 5 %") {
		t.Errorf("a small change: NoChange = %q", got)
	}
}

// TestCSVColumnNotes: the CSV says, per row, why a column was not measured
// and whether its artifacts were identical to the base's.
func TestCSVColumnNotes(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, quietTable(), Options{Format: FormatCSV}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	field := func(rec []string, name string) string {
		i := slices.Index(recs[0], name)
		if i < 0 {
			t.Fatalf("no %s field in %v", name, recs[0])
		}
		return rec[i]
	}
	want := map[string][2]string{"bbbbbbbbbbbb": {"", "true"}, "cccccccccccc": {"only ignored paths changed: README.md", "false"}}
	for _, rec := range recs[1:] {
		id := field(rec, "column_id")
		if got := [2]string{field(rec, "unchanged"), field(rec, "identical")}; got != want[id] {
			t.Errorf("%s %s: unchanged, identical = %q, want %q", field(rec, "metric"), id, got, want[id])
		}
	}
	if len(recs) != 5 {
		t.Errorf("%d records, want a header and 2 metrics x 2 columns", len(recs))
	}
}
