package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// TestCompareFilesJSONSchema: perfbot compare of two Go benchmark files,
// -f json, matches docs/schema/compare.json, with one table of no job.
func TestCompareFilesJSONSchema(t *testing.T) {
	dir := filepath.Join("..", "..", "internal", "report", "testdata", "benchstat")
	code, out, errOut := perfbot(t, "compare", "-f", "json", filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt"), filepath.Join(dir, "new2.txt"))
	if code == exitError {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	schematest.ValidateJSON(t, "compare", []byte(out))
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Tables) != 1 || rep.Tables[0].Job != "" || len(rep.metrics()) == 0 {
		t.Fatalf("%v: want one table of no job, with metrics:\n%s", err, out)
	}
}
