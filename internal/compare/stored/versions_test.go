package stored_test

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/compare/stored"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
)

// TestTableVersions: a table read from the store collects, per column, the
// perfbot versions that took its runs, and the comparison reports say so
// under the table when they differ; runs of one version (with runs that
// record none) get no note.
func TestTableVersions(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	// a: all by v1.0.0; b: rounds 5-8 by v1.1.0; c: round 1 recorded no
	// version (an older perfbot's run), the rest v1.0.0.
	versionOf := func(commit string, r int) string {
		switch {
		case commit == b && r > 4:
			return "v1.1.0"
		case commit == c && r == 1:
			return ""
		}
		return "v1.0.0"
	}
	for r := 1; r <= 8; r++ {
		for k, commit := range []string{a, b, c} {
			rec := &store.RunRecord{RunKey: store.RunKey{Job: "job", Commit: commit, Index: r}, Status: store.RunOK,
				Session: "s1", CPU: -1, Version: versionOf(commit, r),
				Values: []metric.Value{{Name: "x", Better: metric.LowerIsBetter, Value: 100 + 10*float64(k) + float64(r)}}}
			if err := st.PutRun(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	rounds := stored.InRounds([]int{1, 2, 3, 4, 5, 6, 7, 8})
	table := func(x, y string) *compare.Table {
		tab, err := stored.Table(ctx, st, "job", []stored.Source{{Commit: gitrev.Commit{Hash: x}, Round: rounds}, {Commit: gitrev.Commit{Hash: y}, Round: rounds}}, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}

	mixed := table(a, b)
	if got := mixed.Columns[0].Versions; !slices.Equal(got, []string{"v1.0.0"}) {
		t.Errorf("column a versions %v, want [v1.0.0]", got)
	}
	if got := mixed.Columns[1].Versions; !slices.Equal(got, []string{"v1.0.0", "v1.1.0"}) {
		t.Errorf("column b versions %v, want [v1.0.0 v1.1.0]", got)
	}
	const note = "runs from perfbot versions v1.0.0 and v1.1.0"
	for _, f := range []report.Format{report.FormatNCompare, report.FormatBenchstat, report.FormatMarkdown} {
		var buf bytes.Buffer
		if err := report.Write(&buf, mixed, report.Options{Format: f}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), note) {
			t.Errorf("%s report of a table of two versions does not say %q:\n%s", f, note, buf.String())
		}
	}

	same := table(a, c)
	if got := same.Versions(); !slices.Equal(got, []string{"v1.0.0"}) {
		t.Errorf("Versions() of a and c = %v, want [v1.0.0] (a run that records none adds none)", got)
	}
	for _, f := range []report.Format{report.FormatNCompare, report.FormatBenchstat, report.FormatMarkdown} {
		var buf bytes.Buffer
		if err := report.Write(&buf, same, report.Options{Format: f}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "perfbot versions") {
			t.Errorf("%s report of a table of one version has a versions note:\n%s", f, buf.String())
		}
	}
}
