package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
	"github.com/perfbot/perfbot/internal/verdict"
)

// TestFindingsFormat: perfbot findings lists as text by default and, with
// -f json, as one versioned document whose entries carry the finding as
// watch stored it; a format the listing has not is refused.
func TestFindingsFormat(t *testing.T) {
	r := newGitRepo(t)
	r.Commit("base", map[string]string{"bench.sh": "echo ms: 1\n"})
	jobFile := filepath.Join(filepath.Dir(r.Dir), "job.yaml")
	if err := os.WriteFile(jobFile, []byte(jobYAML(r.Dir, 3, "sh bench.sh")), 0o644); err != nil {
		t.Fatal(err)
	}
	watchFile := filepath.Join(t.TempDir(), "watch.yaml")
	if err := os.WriteFile(watchFile, []byte(fmt.Sprintf("jobs: [%s]\nbranches: [main]\ninterval: 1h\n", jobFile)), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(filepath.Dir(jobFile), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	culprit := strings.Repeat("3f2a1c9", 5) + "abcde"
	data, err := json.Marshal(&finding.Finding{Culprit: culprit, Subject: "slow down", Job: "job", Metric: "ms", Change: 7.5, Verdict: verdict.RealRegression})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutFinding(context.Background(), culprit, data); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, stderr := runPerfbot("findings", watchFile)
	if code != exitOK || !strings.Contains(out, culprit[:12]) || !strings.Contains(out, "real-regression") || !strings.Contains(out, "untriaged") {
		t.Fatalf("perfbot findings: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, out, stderr = runPerfbot("findings", watchFile, "-f", "json")
	var doc struct {
		Version  int `json:"version"`
		Findings []struct {
			Culprit, State, Store string
			Withdrawn             bool
			Finding               struct{ Metric, Verdict string }
		} `json:"findings"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("perfbot findings -f json: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	schematest.ValidateJSON(t, "findings", []byte(out))
	if doc.Version != 1 || len(doc.Findings) != 1 {
		t.Fatalf("findings JSON %+v: want version 1 and one finding", doc)
	}
	if f := doc.Findings[0]; f.Culprit != culprit || f.State != "untriaged" || f.Withdrawn || f.Finding.Metric != "ms" || f.Finding.Verdict != "real-regression" || f.Store == "" {
		t.Errorf("finding %+v: want %s untriaged, metric ms, real-regression, with its store", f, culprit)
	}
	if code, _, stderr := runPerfbot("findings", watchFile, "-f", "csv"); code != exitError || !strings.Contains(stderr, `unknown format "csv"`) {
		t.Errorf("perfbot findings -f csv: exit %d, stderr %q; want the format refused", code, stderr)
	}
}
