package metric

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// A SpecError is a problem with a Spec found by Validate. Field names the
// part of the spec at fault, as a job file spells it ("regex", "json",
// "gobench", "builtin", "from", "unit", "better", "name" or "kind"), so a job
// reader can point at the right line ("format" too, for a KindFormat
// spec).
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
	case s.Kind == KindFormat && s.Format != "":
		return s.Format
	}
	return "(unnamed)"
}

func (s *Spec) errorf(field, format string, args ...any) *SpecError {
	return &SpecError{Metric: s.displayName(), Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Validate checks that s can be used to extract values: a known kind with
// exactly its own source field set, a regex that compiles and has a group
// named "value", a well-formed JSON path, a known builtin name, a From that
// is stdout, stderr or a path inside the run directory, and a name where
// one is needed. It returns the first of [Spec.Problems], or nil.
func (s *Spec) Validate() error {
	if errs := s.Problems(); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// Problems returns every problem Validate checks for, at most one per
// field, in the order of the checks (name, kind and source fields, the
// kind's own checks, better, from).
func (s *Spec) Problems() []*SpecError {
	var errs []*SpecError
	add := func(field, format string, args ...any) {
		for _, e := range errs {
			if e.Field == field {
				return // the first problem of a field is enough
			}
		}
		errs = append(errs, s.errorf(field, format, args...))
	}
	if s.Name != "" && strings.ContainsFunc(s.Name, unicode.IsSpace) {
		add("name", "name %q contains white space", s.Name)
	}
	// Only the field of the spec's own kind may be set.
	set := map[string]bool{"regex": s.Pattern != "", "json": s.Path != "", "builtin": s.Builtin != "", "format": s.Format != ""}
	own := map[Kind]string{KindRegex: "regex", KindJSON: "json", KindBuiltin: "builtin", KindGoBench: "", KindFormat: "format"}
	ownField, ok := own[s.Kind]
	if !ok {
		add("kind", "unknown kind %q (want regex, json, gobench, builtin or format)", s.Kind)
		return errs // nothing else can be judged without a kind
	}
	if len(s.Exclude) > 0 && (s.Kind != KindFormat || s.Name != "") {
		add("name", "only a format family excludes metrics")
	}
	for _, f := range []string{"regex", "json", "builtin", "format"} {
		if set[f] && f != ownField {
			add(f, "%s given for a %s metric", f, s.Kind)
		}
	}
	missing := ownField != "" && !set[ownField]
	if missing {
		add(ownField, "missing %s", ownField)
	}

	switch s.Kind {
	case KindRegex:
		if missing {
			break
		}
		re, err := compileRegex(s.Pattern)
		if err != nil {
			add("regex", "%v", err)
			break
		}
		if re.SubexpIndex("value") < 0 {
			add("regex", "%q has no group named \"value\" (write (?P<value>...))", s.Pattern)
		}
		if s.Name == "" && re.SubexpIndex("name") < 0 {
			add("name", "a name is required (or a group named \"name\" in the regex)")
		}
	case KindJSON:
		if !missing {
			if _, err := parseJSONPath(s.Path); err != nil {
				add("json", "%v", err)
			}
		}
		if s.Name == "" {
			add("name", "a name is required")
		}
	case KindBuiltin:
		if s.IsInstructions() {
			break // instructionsProblems
		}
		if _, ok := CanonicalBuiltin(s.Builtin); !ok && !missing {
			add("builtin", "unknown builtin %q (want wall, user, sys, maxrss, %s or one of %s)",
				s.Builtin, Instructions, strings.Join(BuiltinNames(), ", "))
		}
		if s.From != "" {
			add("from", "builtin metrics are measured by perfbot, not read from %q", s.From)
		}
		if s.Unit != "" {
			add("unit", "builtin metrics have fixed units (seconds, KiB)")
		}
	case KindFormat:
		s.formatProblems(add)
	case KindGoBench:
		if s.Better != 0 && s.Unit == "" {
			add("better", "a gobench metric may set better only together with unit (each unit has its own direction)")
		}
	}
	s.instructionsProblems(add)
	switch s.Better {
	case 0, LowerIsBetter, HigherIsBetter:
	default:
		add("better", "invalid value %d (want lower or higher)", int(s.Better))
	}
	switch s.From {
	case "", "stdout", "stderr":
	default:
		if !filepath.IsLocal(s.From) {
			add("from", "%q must be stdout, stderr or a relative path inside the run directory", s.From)
		}
	}
	return errs
}

// Extract reads the values of s from one run's output.
//
// A regex yields one value per match, in order; with a "name" group each
// value is named Spec.Name + "." + the matched name. A JSON path yields one
// value. Gobench yields one value per benchmark result line and unit (see
// extractGoBench). A format yields what its program printed (see
// KindFormat). A builtin yields the figure from out.Usage. When nothing
// is found the error wraps ErrMissing and says what was looked for where; a
// value that is not a finite number is an error naming the text.
func (s *Spec) Extract(out Output) ([]Value, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.IsInstructions() {
		return s.extractInstructions(out)
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
	case KindFormat:
		return s.extractFormat(data, where)
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
