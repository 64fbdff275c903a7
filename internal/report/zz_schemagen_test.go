package report

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/report/doc"
	"github.com/perfbot/perfbot/internal/sensitivity"
	"github.com/perfbot/perfbot/internal/verdict"
)

type gen struct {
	defs map[string]any
}

var (
	numT     = reflect.TypeOf(doc.Num(0))
	verdictT = reflect.TypeOf(verdict.Verdict(""))
	timeT    = reflect.TypeOf(time.Time{})
	rawT     = reflect.TypeOf(json.RawMessage(nil))
	marshT   = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

func (g *gen) schema(t reflect.Type, nullable bool) any {
	var s map[string]any
	switch {
	case t == numT:
		return map[string]any{"type": []string{"number", "null"}}
	case t == verdictT:
		enum := []any{}
		for _, v := range verdict.All {
			enum = append(enum, string(v))
		}
		enum = append(enum, "")
		s = map[string]any{"type": "string", "enum": enum}
	case t == timeT:
		s = map[string]any{"type": "string", "format": "date-time"}
	case t == rawT:
		return map[string]any{}
	case t.Kind() == reflect.Pointer:
		return g.schema(t.Elem(), true)
	case t.Implements(marshT):
		return map[string]any{"description": "MARSHALER " + t.String()}
	}
	if s == nil {
		switch t.Kind() {
		case reflect.String:
			s = map[string]any{"type": "string"}
		case reflect.Bool:
			s = map[string]any{"type": "boolean"}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			s = map[string]any{"type": "integer"}
		case reflect.Float32, reflect.Float64:
			s = map[string]any{"type": "number"}
		case reflect.Slice, reflect.Array:
			s = map[string]any{"type": "array", "items": g.schema(t.Elem(), false)}
		case reflect.Map:
			s = map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem(), false)}
		case reflect.Struct:
			name := t.Name()
			if name == "" {
				s = g.object(t)
			} else {
				name = defName(t)
				if _, ok := g.defs[name]; !ok {
					g.defs[name] = nil
					g.defs[name] = g.object(t)
				}
				s = map[string]any{"$ref": "#/$defs/" + name}
			}
		default:
			s = map[string]any{"description": "UNKNOWN " + t.String()}
		}
	}
	if nullable {
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	}
	return s
}

func defName(t reflect.Type) string {
	p := t.PkgPath()
	p = p[strings.LastIndex(p, "/")+1:]
	n := t.Name()
	n = strings.TrimSuffix(n, "JSON")
	if p == "doc" || p == "report" {
		return strings.ToUpper(n[:1]) + n[1:]
	}
	return strings.ToUpper(p[:1]) + p[1:] + n
}

func (g *gen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var req []string
	g.fields(t, props, &req)
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(req) > 0 {
		o["required"] = req
	}
	return o
}

func (g *gen) fields(t reflect.Type, props map[string]any, req *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			g.fields(ft, props, req)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := strings.Contains(opts, "omitempty")
		nullable := false
		if !omit && !strings.HasSuffix(t.PkgPath(), "/doc") && (f.Type.Kind() == reflect.Slice || f.Type.Kind() == reflect.Map) && f.Type != rawT {
			nullable = true
		}
		props[name] = g.schema(f.Type, nullable && f.Type.Kind() != reflect.Pointer)
		if !omit {
			*req = append(*req, name)
		}
	}
}

func writeSchema(t *testing.T, file, title string, v any) {
	g := &gen{defs: map[string]any{}}
	root := g.schema(reflect.TypeOf(v), false).(map[string]any)
	if ref, ok := root["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		root = g.defs[name].(map[string]any)
		delete(g.defs, name)
	}
	out := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://perfbot.invalid/schema/" + file, "title": title}
	for k, x := range root {
		out[k] = x
	}
	if len(g.defs) > 0 {
		out["$defs"] = g.defs
	}
	data, _ := json.MarshalIndent(out, "", "  ")
	os.WriteFile("/tmp/verdict/schema/"+file, append(data, '\n'), 0o644)
}

func TestGenSchemas(t *testing.T) {
	os.MkdirAll("/tmp/verdict/schema", 0o755)
	writeSchema(t, "compare.json", "perfbot compare -f json", doc.Compare{})
	writeSchema(t, "triage.json", "perfbot triage -f json", doc.Triage{})
	writeSchema(t, "layout.json", "perfbot layout diff -f json", layoutJSON{})
	writeSchema(t, "history.json", "perfbot history -f json", historyJSON{})
	writeSchema(t, "finding.json", "a finding (perfbot watch)", finding.Finding{})
	writeSchema(t, "bisect.json", "perfbot bisect -f json", struct {
		Version    int               `json:"version"`
		Job        string            `json:"job"`
		Repo       string            `json:"repo"`
		Params     map[string]string `json:"params,omitempty"`
		Mode       string            `json:"mode"`
		ModeDetail string            `json:"mode_detail,omitempty"`
		Found      bool              `json:"found"`
		Better     string            `json:"better"`
		Result     *bisect.Result    `json:"result"`
		Table      *doc.CompareTable `json:"table,omitempty"`
		Command    string            `json:"command,omitempty"`
	}{})
	writeSchema(t, "sensitivity.json", "perfbot sensitivity -f json", struct {
		Version int                  `json:"version"`
		Commit  string               `json:"commit"`
		Preset  string               `json:"preset"`
		Layouts []string             `json:"layouts"`
		Metrics []sensitivity.Metric `json:"metrics"`
		Sizes   []sensitivity.Size   `json:"sizes"`
	}{})
}
