package metric

import (
	"fmt"
	"regexp"
	"regexp/syntax"
)

// Regex metrics are multi-line: ^ and $ match at the start and end of every
// line of the output, as in grep and awk, not only at the start and end of
// the whole output. The pattern is compiled as if it began with (?m); a
// pattern can still say (?-m) to match at the ends of the output only, or
// use \A and \z, which never depend on the mode.

// compileRegex compiles a regex metric's pattern in multi-line mode. Errors
// quote the pattern as written.
func compileRegex(pattern string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(pattern); err != nil {
		return nil, err
	}
	// The mode changes what ^ and $ mean, never whether a pattern parses
	// or how its groups are numbered.
	return regexp.Compile("(?m)" + pattern)
}

// LineAnchored reports whether pattern means something else in the
// multi-line mode regex metrics are read in than in Go's default mode: it
// has a ^ or $ that is an anchor (not escaped, not in a character class,
// not under its own (?m) or (?-m) flag). Before regex metrics became
// multi-line such a pattern matched only at the ends of the whole output;
// job keys mark these patterns so that runs read under the old meaning are
// not mixed with runs read under the new one. A pattern that does not parse
// is not line-anchored.
func LineAnchored(pattern string) bool {
	single, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return false
	}
	multi, err := syntax.Parse(pattern, syntax.Perl&^syntax.OneLine)
	if err != nil {
		return false
	}
	// The two parses differ only where OneLine matters: ^ parses as
	// OpBeginText or OpBeginLine, $ as OpEndText or OpEndLine.
	return !single.Equal(multi)
}

func (s *Spec) extractRegex(data []byte, where string) ([]Value, error) {
	re, err := compileRegex(s.Pattern)
	if err != nil { // Validate compiled it
		return nil, s.errorf("regex", "%v", err)
	}
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
