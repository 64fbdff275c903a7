// Package schematest checks JSON documents against perfbot's JSON Schemas
// (docs/schema) in tests. It is apart from package testutil because the
// schema library's start-up cost would otherwise be paid by every run a
// test binary re-executes itself for.
package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaDir is docs/schema of this module: the JSON Schema (draft
// 2020-12) of each JSON output, named after the output ("triage" is
// docs/schema/triage.json).
func schemaDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "schema")
}

var (
	schemasMu sync.Mutex
	schemas   = map[string]*jsonschema.Schema{}
)

// Schema compiles docs/schema/NAME.json once.
func Schema(name string) (*jsonschema.Schema, error) {
	schemasMu.Lock()
	defer schemasMu.Unlock()
	if s := schemas[name]; s != nil {
		return s, nil
	}
	path := filepath.Join(schemaDir(), name+".json")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	// Every schema of the folder, so that one may refer to another's
	// definitions by its $id (bisect's table is compare's).
	all, err := filepath.Glob(filepath.Join(schemaDir(), "*.json"))
	if err != nil {
		return nil, err
	}
	for _, p := range all {
		if err := addSchema(c, p); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
	}
	s, err := c.Compile(path)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	schemas[name] = s
	return s, nil
}

// CheckJSON validates data, one JSON document, against the schema of the
// output NAME (docs/schema/NAME.json); the error names each field at
// fault, such as one the writer added but the schema does not document.
func CheckJSON(name string, data []byte) error {
	s, err := Schema(name)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s: not JSON: %w", name, err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("%s does not match docs/schema/%s.json: %w", name, name, err)
	}
	return nil
}

// ValidateJSON fails the test when data does not match the schema of the
// output NAME (see [CheckJSON]).
func ValidateJSON(tb testing.TB, name string, data []byte) {
	tb.Helper()
	if err := CheckJSON(name, data); err != nil {
		tb.Fatalf("%v\n%s", err, clip(data))
	}
}

// ValidateValue marshals v and validates it as [ValidateJSON] does.
func ValidateValue(tb testing.TB, name string, v any) {
	tb.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	ValidateJSON(tb, name, data)
}

func clip(data []byte) []byte {
	if len(data) > 4000 {
		return append(data[:4000:4000], "..."...)
	}
	return data
}

// addSchema adds the schema file at path to c, under its path and, when
// it has one, its $id.
func addSchema(c *jsonschema.Compiler, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if m, ok := doc.(map[string]any); ok {
		if id, ok := m["$id"].(string); ok && id != "" {
			if err := c.AddResource(id, doc); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			return nil
		}
	}
	return c.AddResource(path, doc)
}
