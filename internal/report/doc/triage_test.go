package doc

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/perfbot/perfbot/internal/verdict"
)

// TestDecodeUnversionedTriage reads a triage report as perfbot wrote it
// before version 2 (no "version", suspects under Go's field names), as
// findings stored then hold it: nothing of the suspects is lost.
func TestDecodeUnversionedTriage(t *testing.T) {
	data, err := os.ReadFile("testdata/triage_unversioned.json")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := DecodeTriage(data)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Version != 0 || tr.Verdict != verdict.DataAlignment || len(tr.Experiments) == 0 {
		t.Fatalf("version %d, verdict %q, %d experiments", tr.Version, tr.Verdict, len(tr.Experiments))
	}
	want := Suspect{Name: "mds_idle_clear", Kind: "object", Section: ".bss", OffsetBefore: 0, OffsetAfter: 48, Why: "offset mod 32 0 -> 16"}
	if len(tr.Suspects) == 0 || tr.Suspects[0] != want {
		t.Fatalf("suspects %+v, want first %+v", tr.Suspects, want)
	}
	// Written again, it has the current names only.
	out, err := json.Marshal(tr.Suspects[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != `{"name":"mds_idle_clear","kind":"object","section":".bss","offset_before":0,"offset_after":48,"why":"offset mod 32 0 -\u003e 16"}` {
		t.Errorf("written back as %s", got)
	}
}

func TestDecodeTriageNewer(t *testing.T) {
	tr, err := DecodeTriage([]byte(`{"version": 99, "verdict": "no-change"}`))
	if err == nil || tr == nil || tr.Verdict != verdict.NoChange {
		t.Fatalf("%+v, %v: want the document read and an error naming its version", tr, err)
	}
	if _, err := DecodeTriage([]byte(`{"verdict": 3}`)); err == nil {
		t.Fatal("a verdict that is not a string was read")
	}
}
