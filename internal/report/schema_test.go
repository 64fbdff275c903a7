package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// goldenSchema is the schema of a JSON golden, by its name.
func goldenSchema(name string) string {
	switch {
	case strings.HasSuffix(name, "-json.golden"):
		return "compare"
	case strings.HasSuffix(name, "-bmf.golden"):
		return "bmf"
	case strings.HasPrefix(name, "triage_") && strings.HasSuffix(name, ".json.golden"):
		return "triage"
	case strings.HasPrefix(name, "bisect_") && strings.HasSuffix(name, ".json"):
		return "bisect"
	case strings.HasPrefix(name, "layout_") && strings.HasSuffix(name, ".json"):
		return "layout"
	}
	return ""
}

// TestGoldensMatchSchemas validates every JSON golden, each a real
// writer's output, against its documented schema (docs/schema).
func TestGoldensMatchSchemas(t *testing.T) {
	files, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, f := range files {
		name := filepath.Base(f)
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		schema := goldenSchema(name)
		if schema == "" {
			if json.Valid(data) {
				t.Errorf("%s is JSON but no schema is named for it", name)
			}
			continue
		}
		seen[schema]++
		t.Run(name, func(t *testing.T) { schematest.ValidateJSON(t, schema, data) })
	}
	for _, s := range []string{"compare", "triage", "bisect", "layout", "bmf"} {
		if seen[s] == 0 {
			t.Errorf("no golden of %s", s)
		}
	}
}

// TestSchemaRefusesUndocumented: a field a writer adds without
// documenting it fails the schema, at the top and deep inside.
func TestSchemaRefusesUndocumented(t *testing.T) {
	for _, c := range []struct{ golden, schema, at string }{
		{"seed-json.golden", "compare", `"metrics": [`},
		{"seed-json.golden", "compare", `"significant": `},
		{"triage_seed.json.golden", "triage", `"verdict": `},
		{"triage_seed.json.golden", "triage", `"offset_before": `},
		{"layout_seed.json", "layout", `"ranking": `},
		{"bisect_found.json", "bisect", `"remaining": `},
	} {
		data, err := os.ReadFile("testdata/" + c.golden)
		if err != nil {
			t.Fatal(err)
		}
		if err := schematest.CheckJSON(c.schema, data); err != nil {
			t.Fatalf("%s as written: %v", c.golden, err)
		}
		i := bytes.Index(data, []byte(c.at))
		if i < 0 {
			t.Fatalf("%s has no %s", c.golden, c.at)
		}
		bad := append(append(append([]byte{}, data[:i]...), `"undocumented_field": 1, `...), data[i:]...)
		err = schematest.CheckJSON(c.schema, bad)
		if err == nil || !strings.Contains(err.Error(), "undocumented_field") {
			t.Errorf("%s with a field added before %s: %v; want the schema to name the field", c.golden, c.at, err)
		}
	}
}
