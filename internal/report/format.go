package report

import (
	"fmt"
	"slices"
	"strings"
)

// Format names an output format of a report. Every command that prints
// takes it as -f/--format (a [FormatFlag]); each report kind accepts the
// formats of its list below.
type Format string

// The formats, across the report kinds.
const (
	FormatText      Format = "text"      // a plain-text report for a terminal
	FormatNCompare  Format = "ncompare"  // the 0-day robot's comparison table (lkp ncompare)
	FormatBenchstat Format = "benchstat" // benchstat's table
	FormatJSON      Format = "json"      // the documented JSON contract (docs/json.md)
	FormatCSV       Format = "csv"       // one row per metric and column
	FormatMarkdown  Format = "markdown"  // GitHub-flavoured Markdown, for a PR comment or a step summary
	FormatEmail     Format = "email"     // a plain-text mail body, the 0-day robot's layout
	FormatSVG       Format = "svg"       // a standalone figure
	FormatBMF       Format = "bmf"       // Bencher Metric Format (JSON), for a Bencher dashboard
)

// The formats of each report kind, the default first.
var (
	Formats            = []Format{FormatNCompare, FormatBenchstat, FormatJSON, FormatCSV, FormatMarkdown, FormatBMF} // comparison tables
	TriageFormats      = []Format{FormatText, FormatMarkdown, FormatJSON, FormatEmail}
	BisectFormats      = []Format{FormatText, FormatMarkdown, FormatJSON, FormatEmail}
	HistoryFormats     = []Format{FormatText, FormatJSON, FormatCSV, FormatSVG}
	LayoutFormats      = []Format{FormatText, FormatJSON}
	SensitivityFormats = []Format{FormatText, FormatJSON}
	GateFormats        = []Format{FormatText, FormatMarkdown, FormatJSON, FormatBMF} // perfbot gate (bmf: WriteBMF over the gate's rows)
	QualifyFormats     = []Format{FormatText, FormatMarkdown, FormatJSON}            // perfbot qualify
	// ListFormats are the formats of a listing (findings, a fleet's jobs).
	ListFormats = []Format{FormatText, FormatJSON}
)

// FormatFlag is a -f/--format flag over one report kind's formats: a
// pflag.Value that refuses, while the flags are parsed, a format the kind
// does not print (before anything is built or measured).
type FormatFlag struct {
	p     *Format
	valid []Format
}

// NewFormatFlag sets *p to valid[0], the default, and returns the flag's
// value.
func NewFormatFlag(p *Format, valid []Format) *FormatFlag {
	*p = valid[0]
	return &FormatFlag{p: p, valid: valid}
}

func (f *FormatFlag) String() string { return string(*f.p) }

// Type is what the help shows after the flag's name.
func (f *FormatFlag) Type() string { return "format" }

// Set takes one of the kind's formats.
func (f *FormatFlag) Set(s string) error {
	v := Format(strings.ToLower(strings.TrimSpace(s)))
	if err := CheckFormat(v, f.valid); err != nil {
		return err
	}
	*f.p = v
	return nil
}

// Usage is the flag's help line: the formats, the default first.
func (f *FormatFlag) Usage() string {
	return "output format: " + JoinFormats(f.valid)
}

// CheckFormat says whether valid holds v, with an error naming the valid
// ones when it does not.
func CheckFormat(v Format, valid []Format) error {
	if slices.Contains(valid, v) {
		return nil
	}
	return fmt.Errorf("unknown format %q (valid: %s)", v, JoinFormats(valid))
}

// JoinFormats lists formats as "a, b, c".
func JoinFormats(fs []Format) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}
