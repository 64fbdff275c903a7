package metric

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// A SpecError is a problem with a Spec found by Validate. Field names the
// part of the spec at fault, as a job file spells it ("regex", "json",
// "gobench", "builtin", "from", "unit", "better", "name" or "kind"), so a job
// reader can point at the right line.
type SpecError struct {
	Metric string // the spec's display name
	Field  string
	Msg    string
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("metric %q: %s: %s", e.Metric, e.Field, e.Msg)
}

// displayName is the name used in messages.
func (s *Spec) displayName() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Kind == KindBuiltin:
		if n, ok := CanonicalBuiltin(s.Builtin); ok {
			return n
		}
		return s.Builtin
	case s.Kind == KindGoBench:
		return "gobench"
	}
	return "(unnamed)"
}

func (s *Spec) errorf(field, format string, args ...any) error {
	return &SpecError{Metric: s.displayName(), Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Validate checks that s can be used to extract values: a known kind with
// exactly its own source field set, a regex that compiles and has a group
// named "value", a well-formed JSON path, a known builtin name, a From that
// is stdout, stderr or a path inside the run directory, and a name where
// one is needed. Errors are *SpecError.
func (s *Spec) Validate() error {
	if s.Name != "" && strings.ContainsFunc(s.Name, unicode.IsSpace) {
		return s.errorf("name", "name %q contains white space", s.Name)
	}
	// Only the field of the spec's own kind may be set.
	set := map[string]bool{"regex": s.Pattern != "", "json": s.Path != "", "builtin": s.Builtin != ""}
	own := map[Kind]string{KindRegex: "regex", KindJSON: "json", KindBuiltin: "builtin", KindGoBench: ""}
	ownField, ok := own[s.Kind]
	if !ok {
		return s.errorf("kind", "unknown kind %q (want regex, json, gobench or builtin)", s.Kind)
	}
	for _, f := range []string{"regex", "json", "builtin"} {
		if set[f] && f != ownField {
			return s.errorf(f, "%s given for a %s metric", f, s.Kind)
		}
	}
	if ownField != "" && !set[ownField] {
		return s.errorf(ownField, "missing %s", ownField)
	}

	switch s.Kind {
	case KindRegex:
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return s.errorf("regex", "%v", err)
		}
		if re.SubexpIndex("value") < 0 {
			return s.errorf("regex", "%q has no group named \"value\" (write (?P<value>...))", s.Pattern)
		}
		if s.Name == "" && re.SubexpIndex("name") < 0 {
			return s.errorf("name", "a name is required (or a group named \"name\" in the regex)")
		}
	case KindJSON:
		if _, err := parseJSONPath(s.Path); err != nil {
			return s.errorf("json", "%v", err)
		}
		if s.Name == "" {
			return s.errorf("name", "a name is required")
		}
	case KindBuiltin:
		if _, ok := CanonicalBuiltin(s.Builtin); !ok {
			return s.errorf("builtin", "unknown builtin %q (want wall, user, sys, maxrss or one of %s)",
				s.Builtin, strings.Join(BuiltinNames(), ", "))
		}
		if s.From != "" {
			return s.errorf("from", "builtin metrics are measured by perfbot, not read from %q", s.From)
		}
		if s.Unit != "" {
			return s.errorf("unit", "builtin metrics have fixed units (seconds, KiB)")
		}
	case KindGoBench:
		if s.Better != 0 && s.Unit == "" {
			return s.errorf("better", "a gobench metric may set better only together with unit (each unit has its own direction)")
		}
	}
	switch s.Better {
	case 0, LowerIsBetter, HigherIsBetter:
	default:
		return s.errorf("better", "invalid value %d (want lower or higher)", int(s.Better))
	}
	switch s.From {
	case "", "stdout", "stderr":
	default:
		if !filepath.IsLocal(s.From) {
			return s.errorf("from", "%q must be stdout, stderr or a relative path inside the run directory", s.From)
		}
	}
	return nil
}

// Extract reads the values of s from one run's output.
//
// A regex yields one value per match, in order; with a "name" group each
// value is named Spec.Name + "." + the matched name. A JSON path yields one
// value. Gobench yields one value per benchmark result line and unit (see
// extractGoBench). A builtin yields the figure from out.Usage. When nothing
// is found the error wraps ErrMissing and says what was looked for where; a
// value that is not a finite number is an error naming the text.
func (s *Spec) Extract(out Output) ([]Value, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Kind == KindBuiltin {
		b := lookupBuiltin(s.Builtin)
		name := s.Name
		if name == "" {
			name = b.name
		}
		return []Value{{Name: name, Unit: b.unit, Better: s.betterOr(LowerIsBetter), Value: b.get(out.Usage)}}, nil
	}
	data, where, err := s.source(out)
	if err != nil {
		return nil, err
	}
	switch s.Kind {
	case KindRegex:
		return s.extractRegex(data, where)
	case KindJSON:
		return s.extractJSON(data, where)
	default: // KindGoBench; Validate rejected the rest
		return s.extractGoBench(data, where)
	}
}

func (s *Spec) betterOr(def Better) Better {
	if s.Better != 0 {
		return s.Better
	}
	return def
}

// source returns the bytes s reads and a description of where they came from.
func (s *Spec) source(out Output) ([]byte, string, error) {
	switch s.From {
	case "", "stdout":
		return out.Stdout, "stdout", nil
	case "stderr":
		return out.Stderr, "stderr", nil
	}
	if out.Dir == "" {
		return nil, "", fmt.Errorf("metric %q: reading file %s: the run has no directory", s.displayName(), s.From)
	}
	path := filepath.Join(out.Dir, s.From)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("metric %q: file %s does not exist: %w", s.displayName(), path, ErrMissing)
	}
	if err != nil {
		return nil, "", fmt.Errorf("metric %q: %w", s.displayName(), err)
	}
	return data, path, nil
}

func (s *Spec) extractRegex(data []byte, where string) ([]Value, error) {
	re := regexp.MustCompile(s.Pattern) // Validate compiled it
	vi, ni := re.SubexpIndex("value"), re.SubexpIndex("name")
	var vals []Value
	for _, m := range re.FindAllSubmatchIndex(data, -1) {
		if m[2*vi] < 0 {
			return nil, fmt.Errorf("metric %q: regex %q matched %s in %s but its group \"value\" did not take part",
				s.displayName(), s.Pattern, quoteText(data[m[0]:m[1]]), where)
		}
		text := data[m[2*vi]:m[2*vi+1]]
		f, err := parseNumber(string(text))
		if err != nil {
			return nil, fmt.Errorf("metric %q: regex %q in %s: %v", s.displayName(), s.Pattern, where, err)
		}
		name := s.Name
		if ni >= 0 && m[2*ni] >= 0 && m[2*ni] < m[2*ni+1] {
			name = joinName(s.Name, string(data[m[2*ni]:m[2*ni+1]]))
		}
		if name == "" {
			return nil, fmt.Errorf("metric %q: regex %q matched %s in %s with an empty group \"name\"",
				s.displayName(), s.Pattern, quoteText(data[m[0]:m[1]]), where)
		}
		vals = append(vals, Value{Name: name, Unit: s.Unit, Better: s.betterOr(LowerIsBetter), Value: f})
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("metric %q: regex %q matched nothing in %s: %w", s.displayName(), s.Pattern, where, ErrMissing)
	}
	return vals, nil
}

func (s *Spec) extractJSON(data []byte, where string) ([]Value, error) {
	p, _ := parseJSONPath(s.Path) // Validate checked it
	v, found, anyJSON := findJSON(p, data)
	if !found {
		if !anyJSON {
			return nil, fmt.Errorf("metric %q: json path %s: %s holds no JSON document or JSON lines: %w", s.displayName(), s.Path, where, ErrMissing)
		}
		return nil, fmt.Errorf("metric %q: json path %s found nothing in %s: %w", s.displayName(), s.Path, where, ErrMissing)
	}
	f, err := jsonNumber(v)
	if err != nil {
		return nil, fmt.Errorf("metric %q: json path %s in %s: %v", s.displayName(), s.Path, where, err)
	}
	return []Value{{Name: s.Name, Unit: s.Unit, Better: s.betterOr(LowerIsBetter), Value: f}}, nil
}

func joinName(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// parseNumber parses a decimal or hexadecimal floating-point number,
// allowing surrounding white space; NaN and infinities are rejected.
func parseNumber(text string) (float64, error) {
	t := strings.TrimSpace(text)
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed number %s", quoteText([]byte(text)))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("number %s is not finite", quoteText([]byte(text)))
	}
	return f, nil
}

// quoteText quotes text for a message, shortening long text.
func quoteText(text []byte) string {
	const max = 80
	if len(text) > max {
		return strconv.Quote(string(text[:max])) + "..."
	}
	return strconv.Quote(string(text))
}
