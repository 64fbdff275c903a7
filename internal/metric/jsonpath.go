package metric

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A jsonPath is a parsed Spec.Path: a sequence of object keys and array
// indexes, written like jq's simplest paths:
//
//	.                      the whole document
//	.a.b                   key "b" of key "a"
//	.results[0].ops_per_sec
//	.["key.with.dots"]     a key written as a JSON string
//
// A plain key runs up to the next '.' or '['; it may not be empty or hold
// ']' or white space.
type jsonPath []jsonStep

type jsonStep struct {
	key   string
	index int // when key == "" and isIndex
	isIdx bool
}

func parseJSONPath(path string) (jsonPath, error) {
	if path == "" {
		return nil, fmt.Errorf("empty path (want e.g. .results[0].ops_per_sec)")
	}
	if path[0] != '.' && path[0] != '[' {
		return nil, fmt.Errorf("path %q must start with '.'", path)
	}
	if path == "." {
		return jsonPath{}, nil
	}
	var p jsonPath
	rest := path
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			if strings.HasPrefix(rest, "[") {
				continue // ".[...]" is the same as "[...]"
			}
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			key := rest[:end]
			if key == "" {
				return nil, fmt.Errorf("path %q: empty key at offset %d", path, len(path)-len(rest))
			}
			if strings.ContainsAny(key, "] \t\r\n\"") {
				return nil, fmt.Errorf("path %q: invalid key %q (quote it: .[%q])", path, key, key)
			}
			p = append(p, jsonStep{key: key})
			rest = rest[end:]
		case '[':
			end := closingBracket(rest)
			if end < 0 {
				return nil, fmt.Errorf("path %q: missing ']' at offset %d", path, len(path)-len(rest))
			}
			inner := rest[1:end]
			rest = rest[end+1:]
			if strings.HasPrefix(inner, `"`) {
				key, err := strconv.Unquote(inner)
				if err != nil {
					return nil, fmt.Errorf("path %q: invalid quoted key %s", path, inner)
				}
				p = append(p, jsonStep{key: key})
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 || inner != strconv.Itoa(n) {
				return nil, fmt.Errorf("path %q: invalid index [%s] (want a non-negative integer)", path, inner)
			}
			p = append(p, jsonStep{index: n, isIdx: true})
		default:
			return nil, fmt.Errorf("path %q: unexpected %q at offset %d (want '.' or '[')", path, rest[0], len(path)-len(rest))
		}
	}
	return p, nil
}

// closingBracket returns the offset of the ']' that closes the '[' at s[0],
// skipping over a quoted string, or -1.
func closingBracket(s string) int {
	inQuote, escaped := false, false
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case inQuote && c == '\\':
			escaped = true
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == ']':
			return i
		}
	}
	return -1
}

// lookup follows p in a document decoded with UseNumber.
func (p jsonPath) lookup(doc any) (any, bool) {
	v := doc
	for _, s := range p {
		if s.isIdx {
			arr, ok := v.([]any)
			if !ok || s.index >= len(arr) {
				return nil, false
			}
			v = arr[s.index]
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[s.key]; !ok {
			return nil, false
		}
	}
	return v, true
}

// decodeJSON decodes data as exactly one JSON document, numbers kept as
// json.Number.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON document")
	}
	return v, nil
}

// findJSON looks for p in data, read as one JSON document or, failing that,
// as JSON lines (the last line holding p wins). It reports whether data
// held any JSON at all, to say so when nothing is found.
func findJSON(p jsonPath, data []byte) (v any, found, anyJSON bool) {
	if doc, err := decodeJSON(data); err == nil {
		v, found = p.lookup(doc)
		return v, found, true
	}
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || (line[0] != '{' && line[0] != '[') {
			continue
		}
		doc, err := decodeJSON(line)
		if err != nil {
			continue
		}
		anyJSON = true
		if lv, ok := p.lookup(doc); ok {
			v, found = lv, true
		}
	}
	return v, found, anyJSON
}

// jsonNumber converts a value found at a path to a number: JSON numbers and
// strings holding a number are accepted.
func jsonNumber(v any) (float64, error) {
	switch v := v.(type) {
	case json.Number:
		return parseNumber(string(v))
	case string:
		return parseNumber(v)
	case nil:
		return 0, fmt.Errorf("value is null, not a number")
	case bool:
		return 0, fmt.Errorf("value %v is a boolean, not a number", v)
	case map[string]any:
		return 0, fmt.Errorf("value is an object, not a number")
	case []any:
		return 0, fmt.Errorf("value is an array, not a number")
	}
	return 0, fmt.Errorf("value of type %T is not a number", v)
}
