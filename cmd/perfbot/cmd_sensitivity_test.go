package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// TestSensitivity: perfbot sensitivity on the demo's base, built plain,
// forced and under a layout by its own Makefile: every metric gets a
// forced-alignment change with an interval that holds it, and the size
// cost says .text grows under forced alignment.
func TestSensitivity(t *testing.T) {
	testutil.NeedTool(t, "git", "gcc", "make")
	repo, err := demo.Create(filepath.Join(t.TempDir(), "bench"), demo.Options{History: demo.HistoryTriage})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := perfbot(t, "sensitivity", repo.JobFile, "main", "--runs", "3", "--layouts", "2", "--cpu", "none", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	schematest.ValidateJSON(t, "sensitivity", []byte(out))
	var doc struct {
		Layouts []string `json:"layouts"`
		Metrics []struct {
			Name                       string
			Forced, ForcedLo, ForcedHi float64
		} `json:"metrics"`
		Sizes []struct {
			Name          string
			Plain, Forced uint64
		} `json:"sizes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(doc.Layouts) != 2 || len(doc.Metrics) == 0 {
		t.Fatalf("layouts %v, %d metrics:\n%s", doc.Layouts, len(doc.Metrics), out)
	}
	for _, m := range doc.Metrics {
		if m.Name != "text_ms" && m.Name != "data_ms" {
			continue // the job's own metrics; resource figures may sit at 0
		}
		if m.ForcedLo > m.Forced || m.Forced > m.ForcedHi {
			t.Errorf("%s: forced change %+.1f%% outside its interval [%+.1f%%, %+.1f%%]", m.Name, m.Forced, m.ForcedLo, m.ForcedHi)
		}
	}
	grew := false
	for _, s := range doc.Sizes {
		if s.Name == ".text" && s.Forced > s.Plain {
			grew = true
		}
	}
	if !grew {
		t.Errorf("sizes %+v: want .text bigger under forced alignment", doc.Sizes)
	}
}
