package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// TestHistoryCommand runs perfbot watch --once twice on a real repository
// (a C benchmark built with gcc, a plain and a forced history) and reads
// both histories back with perfbot history in every format; bad flags get
// errors that name them. The robot's decisions are tested in
// internal/watch; this is the command's wiring, in seconds.
func TestHistoryCommand(t *testing.T) {
	r := newGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	dir := filepath.Dir(r.Dir)
	jobFile := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(jobFile, []byte(jobYAML(r.Dir, 6, "./bench 200000")), 0o644); err != nil {
		t.Fatal(err)
	}
	watchFile := filepath.Join(dir, "watch.yaml")
	if err := os.WriteFile(watchFile, []byte("jobs:\n  - {file: bench.yaml, histories: [forced]}\nbranches: [main]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := perfbot(t, "watch", watchFile, "--once"); code != 0 {
		t.Fatalf("watch: exit %d\n%s", code, errOut)
	}
	docs := r.Commit("docs", map[string]string{"README": "bench\n"})
	if code, _, errOut := perfbot(t, "watch", watchFile, "--once"); code != 0 {
		t.Fatalf("second watch: exit %d\n%s", code, errOut)
	}

	for _, hist := range []string{"plain", "forced"} {
		code, out, errOut := perfbot(t, "history", jobFile, "--branch", "main", "--history", hist, "--format", "json")
		if code != 0 {
			t.Fatalf("history --history %s: exit %d\n%s", hist, code, errOut)
		}
		schematest.ValidateJSON(t, "history", []byte(out))
		var doc struct {
			Job, History, Branch, Metric, Better string
			Points                               []struct {
				Commit string
				Ref    string
				Runs   int
				Median float64
				Step   *float64
			}
			Changes []json.RawMessage
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("history --history %s: %v\n%s", hist, err, out)
		}
		p := doc.Points
		if doc.Job != "bench" || doc.History != hist || doc.Branch != "main" || doc.Metric != "work_ms" || doc.Better != "lower" ||
			len(p) != 2 || p[0].Commit != base || p[1].Commit != docs || p[1].Ref != base || p[0].Step != nil || p[1].Step == nil ||
			p[1].Runs < 6 || p[1].Median <= 0 || doc.Changes == nil {
			t.Errorf("history --history %s:\n%s", hist, out)
		}
	}
	code, out, _ := perfbot(t, "history", jobFile, "--branch", "main", "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(rows) != 3 || rows[0][0] != "commit" || rows[2][0] != docs || rows[1][7] != "" || rows[2][7] == "" {
		t.Errorf("history --format csv: exit %d, %v:\n%s", code, err, out)
	}
	// The standalone figure: an SVG document with a point per tested
	// commit, each carrying its commit.
	code, out, _ = perfbot(t, "history", jobFile, "--branch", "main", "--format", "svg")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "<svg") || !strings.Contains(out, `data-commit="`+base+`"`) || !strings.Contains(out, `data-commit="`+docs+`"`) {
		t.Errorf("history --format svg: exit %d:\n%.600s", code, out)
	}
	code, out, _ = perfbot(t, "history", jobFile, "--branch", "main")
	if code != 0 || !strings.Contains(out, "metric work_ms (lower is better) of job bench, plain history of main") || !strings.Contains(out, docs[:12]) {
		t.Errorf("history: exit %d:\n%s", code, out)
	}
	for _, bad := range []struct{ flag, value, want string }{
		{"--history", "sideways", `history "sideways": want plain or forced`},
		{"--format", "xml", `unknown format "xml" (valid: text, json, csv, svg)`},
		{"--preset", "nope", "preset"},
	} {
		args := []string{"history", jobFile, "--branch", "main", bad.flag, bad.value}
		if bad.flag == "--preset" {
			args = append(args, "--history", "forced")
		}
		code, _, errOut := perfbot(t, args...)
		if code == 0 || !strings.Contains(errOut, bad.want) {
			t.Errorf("history %s %s: exit %d, stderr %q, want an error with %q", bad.flag, bad.value, code, errOut, bad.want)
		}
	}
}
