package metric

import (
	"reflect"
	"testing"
)

func TestLineAnchored(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		want    bool
	}{
		{`text_ms: (?P<value>[0-9.]+)`, false},
		{`^-1\s+(?P<value>[0-9.]+)`, true},
		{`x: (?P<value>\d+)$`, true},
		{`a|^b`, true},
		{`(?:x(?P<value>\d)^)`, true},
		{`\^b\$: (?P<value>[^ ]+)`, false},  // escaped, and ^ negating a class
		{`d(?P<value>[$^0-9]+)`, false},     // inside a class
		{`(?m)^c: (?P<value>\S+)$`, false},  // already multi-line
		{`(?-m)^c: (?P<value>\S+)$`, false}, // explicitly not
		{`(?m:^c): (?P<value>\S+)`, false},
		{`\Ae: (?P<value>\d+)\z`, false}, // text anchors mean the same in both modes
		{`(?P<value>\d+`, false},         // does not parse
		{``, false},
	} {
		if got := LineAnchored(tt.pattern); got != tt.want {
			t.Errorf("LineAnchored(%q) = %v, want %v", tt.pattern, got, tt.want)
		}
	}
}

func TestExtractRegexMultiLine(t *testing.T) {
	const out = "n    time\n-1   12.5\n 0    3\n-1   14\ntotal 7"
	runExtract(t, []extractCase{
		{desc: "^ anchors each line", spec: Spec{Name: "t", Kind: KindRegex, Pattern: `^-1\s+(?P<value>[0-9.]+)`}, out: stdout(out),
			want: []Value{{"t", "", LowerIsBetter, 12.5}, {"t", "", LowerIsBetter, 14}}},
		{desc: "$ anchors each line", spec: Spec{Name: "t", Kind: KindRegex, Pattern: `(?P<value>[0-9.]+)$`}, out: stdout(out),
			want: []Value{{"t", "", LowerIsBetter, 12.5}, {"t", "", LowerIsBetter, 3}, {"t", "", LowerIsBetter, 14}, {"t", "", LowerIsBetter, 7}}},
		{desc: "(?-m) anchors the whole output", spec: Spec{Name: "t", Kind: KindRegex, Pattern: `(?-m)(?P<value>[0-9.]+)$`}, out: stdout(out),
			want: []Value{{"t", "", LowerIsBetter, 7}}},
		{desc: `\A anchors the whole output`, spec: Spec{Name: "t", Kind: KindRegex, Pattern: `\A-1\s+(?P<value>[0-9.]+)`}, out: stdout(out),
			err: "matched nothing", missing: true},
	})
}

func TestProblems(t *testing.T) {
	type problem struct{ Field, Msg string }
	for _, tt := range []struct {
		desc string
		spec Spec
		want []problem
	}{
		{"valid", Spec{Name: "x", Kind: KindRegex, Pattern: `(?P<value>\d)`}, nil},
		{"bad regex and bad better", Spec{Name: "x", Kind: KindRegex, Pattern: `(?P<value>\d`, Better: 3}, []problem{
			{"regex", "error parsing regexp: missing closing ): `(?P<value>\\d`"},
			{"better", "invalid value 3 (want lower or higher)"},
		}},
		{"no value group and no name", Spec{Kind: KindRegex, Pattern: `(\d)`, From: "/x"}, []problem{
			{"regex", `"(\\d)" has no group named "value" (write (?P<value>...))`},
			{"name", `a name is required (or a group named "name" in the regex)`},
			{"from", `"/x" must be stdout, stderr or a relative path inside the run directory`},
		}},
		{"name with space and bad json path", Spec{Name: "a b", Kind: KindJSON, Path: "x"}, []problem{
			{"name", `name "a b" contains white space`},
			{"json", `path "x" must start with '.'`},
		}},
		{"builtin with unit and a bad from: one problem per field", Spec{Kind: KindBuiltin, Builtin: "wall", Unit: "ms", From: "/x"}, []problem{
			{"from", `builtin metrics are measured by perfbot, not read from "/x"`},
			{"unit", "builtin metrics have fixed units (seconds, KiB)"},
		}},
		{"unknown kind stops there", Spec{Name: "a b", Kind: "csv", Better: 5}, []problem{
			{"name", `name "a b" contains white space`},
			{"kind", `unknown kind "csv" (want regex, json, gobench, builtin or format)`},
		}},
	} {
		t.Run(tt.desc, func(t *testing.T) {
			var got []problem
			for _, e := range tt.spec.Problems() {
				got = append(got, problem{e.Field, e.Msg})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Problems() =\n%q\nwant\n%q", got, tt.want)
			}
			if err := tt.spec.Validate(); (err == nil) != (len(tt.want) == 0) {
				t.Fatalf("Validate() = %v with %d problems", err, len(tt.want))
			}
		})
	}
}
