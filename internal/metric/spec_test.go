package metric

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		desc  string
		spec  Spec
		field string // "" means valid
		msg   string // substring of the error
	}{
		{"regex ok", Spec{Name: "text_ms", Kind: KindRegex, Pattern: `text_ms: (?P<value>[0-9.]+)`}, "", ""},
		{"regex with name group needs no name", Spec{Kind: KindRegex, Pattern: `(?P<name>\w+): (?P<value>\S+)`}, "", ""},
		{"regex does not compile", Spec{Name: "x", Kind: KindRegex, Pattern: `x: (?P<value>[0-9.]+`}, "regex", "missing closing )"},
		{"regex without value group", Spec{Name: "x", Kind: KindRegex, Pattern: `x: ([0-9.]+)`}, "regex", `no group named "value"`},
		{"regex without name", Spec{Kind: KindRegex, Pattern: `x: (?P<value>[0-9.]+)`}, "name", "a name is required"},
		{"regex missing", Spec{Name: "x", Kind: KindRegex}, "regex", "missing regex"},
		{"regex with a path too", Spec{Name: "x", Kind: KindRegex, Pattern: `(?P<value>.)`, Path: ".a"}, "json", "json given for a regex metric"},
		{"json ok", Spec{Name: "ops", Kind: KindJSON, Path: ".results[0].ops_per_sec"}, "", ""},
		{"json quoted key", Spec{Name: "ops", Kind: KindJSON, Path: `.["a.b"][2]`}, "", ""},
		{"json bad index", Spec{Name: "ops", Kind: KindJSON, Path: ".results[x]"}, "json", "invalid index [x]"},
		{"json negative index", Spec{Name: "ops", Kind: KindJSON, Path: ".results[-1]"}, "json", "invalid index [-1]"},
		{"json unclosed", Spec{Name: "ops", Kind: KindJSON, Path: ".results[0"}, "json", "missing ']'"},
		{"json no dot", Spec{Name: "ops", Kind: KindJSON, Path: "results"}, "json", "must start with '.'"},
		{"json empty key", Spec{Name: "ops", Kind: KindJSON, Path: ".a..b"}, "json", "empty key"},
		{"json without name", Spec{Kind: KindJSON, Path: ".a"}, "name", "a name is required"},
		{"gobench ok", Spec{Kind: KindGoBench}, "", ""},
		{"gobench better without unit", Spec{Kind: KindGoBench, Better: HigherIsBetter}, "better", "only together with unit"},
		{"gobench better with unit", Spec{Kind: KindGoBench, Unit: "ops/s", Better: HigherIsBetter}, "", ""},
		{"builtin short", Spec{Kind: KindBuiltin, Builtin: "wall"}, "", ""},
		{"builtin lkp", Spec{Kind: KindBuiltin, Builtin: "time.maximum_resident_set_size"}, "", ""},
		{"builtin unknown", Spec{Kind: KindBuiltin, Builtin: "walltime"}, "builtin", `unknown builtin "walltime"`},
		{"builtin with unit", Spec{Kind: KindBuiltin, Builtin: "wall", Unit: "ms"}, "unit", "fixed units"},
		{"builtin with from", Spec{Kind: KindBuiltin, Builtin: "wall", From: "stderr"}, "from", "measured by perfbot"},
		{"unknown kind", Spec{Name: "x", Kind: "csv"}, "kind", `unknown kind "csv"`},
		{"from file", Spec{Name: "x", Kind: KindJSON, Path: ".a", From: "out/result.json"}, "", ""},
		{"from absolute", Spec{Name: "x", Kind: KindJSON, Path: ".a", From: "/etc/passwd"}, "from", "inside the run directory"},
		{"from escaping", Spec{Name: "x", Kind: KindJSON, Path: ".a", From: "../x.json"}, "from", "inside the run directory"},
		{"bad better", Spec{Name: "x", Kind: KindJSON, Path: ".a", Better: 2}, "better", "invalid value 2"},
		{"name with space", Spec{Name: "text ms", Kind: KindJSON, Path: ".a"}, "name", "white space"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			err := tt.spec.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("Validate() = %v, want a *SpecError", err)
			}
			if se.Field != tt.field || !strings.Contains(se.Msg, tt.msg) {
				t.Fatalf("Validate() = field %q msg %q, want field %q msg containing %q", se.Field, se.Msg, tt.field, tt.msg)
			}
		})
	}
}

// extractCase is one row of the Extract tables.
type extractCase struct {
	desc string
	spec Spec
	out  Output
	want []Value
	// err is a substring of the expected error; missing says it must wrap
	// ErrMissing.
	err     string
	missing bool
}

func runExtract(t *testing.T, tests []extractCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := tt.spec.Extract(tt.out)
			if tt.err != "" {
				if err == nil {
					t.Fatalf("Extract() = %v, want error containing %q", got, tt.err)
				}
				if !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Extract() error = %q, want it to contain %q", err, tt.err)
				}
				if errors.Is(err, ErrMissing) != tt.missing {
					t.Fatalf("Extract() error %q: errors.Is(ErrMissing) = %v, want %v", err, !tt.missing, tt.missing)
				}
				return
			}
			if err != nil {
				t.Fatalf("Extract() error = %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Extract() =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func stdout(s string) Output { return Output{Stdout: []byte(s)} }

// ns converts nanoseconds to seconds the way benchfmt tidies ns/op.
func ns(v float64) float64 { return v * 1e-9 }

func TestExtractRegex(t *testing.T) {
	textMS := Spec{Name: "text_ms", Kind: KindRegex, Pattern: `text_ms: (?P<value>[0-9.]+)`, Unit: "ms", Better: LowerIsBetter}
	runExtract(t, []extractCase{
		{desc: "one match", spec: textMS, out: stdout("start\ntext_ms: 12.5\ndone\n"),
			want: []Value{{"text_ms", "ms", LowerIsBetter, 12.5}}},
		{desc: "several matches in order", spec: textMS, out: stdout("text_ms: 3\ntext_ms: 1\ntext_ms: 2\n"),
			want: []Value{{"text_ms", "ms", LowerIsBetter, 3}, {"text_ms", "ms", LowerIsBetter, 1}, {"text_ms", "ms", LowerIsBetter, 2}}},
		{desc: "nothing matched", spec: textMS, out: stdout("text: 12\n"),
			err: `metric "text_ms": regex "text_ms: (?P<value>[0-9.]+)" matched nothing in stdout`, missing: true},
		{desc: "from stderr", spec: Spec{Name: "t", Kind: KindRegex, Pattern: `t=(?P<value>\S+)`, From: "stderr"},
			out:  Output{Stdout: []byte("t=1"), Stderr: []byte("t=2e3")},
			want: []Value{{"t", "", LowerIsBetter, 2000}}},
		{desc: "malformed number", spec: Spec{Name: "t", Kind: KindRegex, Pattern: `t=(?P<value>\S+)`}, out: stdout("t=1.2.3\n"),
			err: `malformed number "1.2.3"`},
		{desc: "NaN is not a value", spec: Spec{Name: "t", Kind: KindRegex, Pattern: `t=(?P<value>\S+)`}, out: stdout("t=NaN\n"),
			err: `number "NaN" is not finite`},
		{desc: "name group", spec: Spec{Name: "lat", Kind: KindRegex, Pattern: `(?m)^(?P<name>p\d+): (?P<value>[0-9.]+)us$`, Unit: "us"},
			out:  stdout("p50: 10us\np99: 95.5us\n"),
			want: []Value{{"lat.p50", "us", LowerIsBetter, 10}, {"lat.p99", "us", LowerIsBetter, 95.5}}},
		{desc: "name group without prefix", spec: Spec{Kind: KindRegex, Pattern: `(?P<name>\w+)=(?P<value>\d+)`, Better: HigherIsBetter},
			out:  stdout("reads=10 writes=20"),
			want: []Value{{"reads", "", HigherIsBetter, 10}, {"writes", "", HigherIsBetter, 20}}},
		{desc: "value group not taking part", spec: Spec{Name: "t", Kind: KindRegex, Pattern: `t=(?:(?P<value>\d+)|none)`}, out: stdout("t=none"),
			err: `group "value" did not take part`},
		{desc: "empty value", spec: Spec{Name: "t", Kind: KindRegex, Pattern: `t=(?P<value>\d*)`}, out: stdout("t="),
			err: `malformed number ""`},
		{desc: "invalid spec", spec: Spec{Name: "t", Kind: KindRegex, Pattern: `t=(\d+)`}, out: stdout("t=1"),
			err: `no group named "value"`},
	})
}

func TestExtractJSON(t *testing.T) {
	ops := Spec{Name: "ops", Kind: KindJSON, Path: ".results[0].ops_per_sec", Better: HigherIsBetter, Unit: "ops/s"}
	runExtract(t, []extractCase{
		{desc: "document", spec: ops, out: stdout(`{"results": [{"ops_per_sec": 1234.5}, {"ops_per_sec": 1}]}`),
			want: []Value{{"ops", "ops/s", HigherIsBetter, 1234.5}}},
		{desc: "numeric string", spec: ops, out: stdout(`{"results": [{"ops_per_sec": " 77 "}]}`),
			want: []Value{{"ops", "ops/s", HigherIsBetter, 77}}},
		{desc: "big integer", spec: ops, out: stdout(`{"results": [{"ops_per_sec": 12345678901234567890}]}`),
			want: []Value{{"ops", "ops/s", HigherIsBetter, 12345678901234567890}}},
		{desc: "json lines, last line with the path wins", spec: Spec{Name: "a", Kind: KindJSON, Path: ".a.b"},
			out:  stdout("log line\n{\"a\": {\"b\": 1}}\n{\"x\": 5}\n{\"a\": {\"b\": 2}}\n{\"a\": {\"c\": 3}}\nbye\n"),
			want: []Value{{"a", "", LowerIsBetter, 2}}},
		{desc: "whole document", spec: Spec{Name: "n", Kind: KindJSON, Path: "."}, out: stdout(" 42\n"),
			want: []Value{{"n", "", LowerIsBetter, 42}}},
		{desc: "quoted key", spec: Spec{Name: "n", Kind: KindJSON, Path: `.["a.b"]`}, out: stdout(`{"a.b": 3, "a": {"b": 4}}`),
			want: []Value{{"n", "", LowerIsBetter, 3}}},
		{desc: "path missing", spec: ops, out: stdout(`{"results": []}`),
			err: `metric "ops": json path .results[0].ops_per_sec found nothing in stdout`, missing: true},
		{desc: "not JSON", spec: ops, out: stdout("ops: 12\n"),
			err: "stdout holds no JSON document or JSON lines", missing: true},
		{desc: "malformed string", spec: ops, out: stdout(`{"results": [{"ops_per_sec": "12k"}]}`),
			err: `malformed number "12k"`},
		{desc: "boolean", spec: ops, out: stdout(`{"results": [{"ops_per_sec": true}]}`),
			err: "value true is a boolean, not a number"},
		{desc: "object", spec: Spec{Name: "r", Kind: KindJSON, Path: ".results"}, out: stdout(`{"results": {"a": 1}}`),
			err: "value is an object, not a number"},
		{desc: "null", spec: ops, out: stdout(`{"results": [{"ops_per_sec": null}]}`),
			err: "value is null, not a number"},
		{desc: "overflow", spec: ops, out: stdout(`{"results": [{"ops_per_sec": 1e999}]}`),
			err: `malformed number "1e999"`},
	})
}

const goBenchOutput = `goos: linux
goarch: amd64
pkg: example.com/kv
cpu: Test CPU
BenchmarkPut/size=10-8         	 1000000	      1200 ns/op	  64 B/op	       2 allocs/op
BenchmarkPut/size=10-8         	 1000000	      1100 ns/op	  64 B/op	       2 allocs/op
BenchmarkScan-8                	     500	   2000000 ns/op	 150.00 MB/s
BenchmarkOps-8  10  5 ops/s  3 widgets/op
PASS
ok  	example.com/kv	3.2s
`

func TestExtractGoBench(t *testing.T) {
	runExtract(t, []extractCase{
		{desc: "every value, tidied units", spec: Spec{Name: "go", Kind: KindGoBench}, out: stdout(goBenchOutput),
			want: []Value{
				{"go.Put/size=10-8.sec/op", "sec/op", LowerIsBetter, ns(1200)},
				{"go.Put/size=10-8.B/op", "B/op", LowerIsBetter, 64},
				{"go.Put/size=10-8.allocs/op", "allocs/op", LowerIsBetter, 2},
				{"go.Put/size=10-8.sec/op", "sec/op", LowerIsBetter, ns(1100)},
				{"go.Put/size=10-8.B/op", "B/op", LowerIsBetter, 64},
				{"go.Put/size=10-8.allocs/op", "allocs/op", LowerIsBetter, 2},
				{"go.Scan-8.sec/op", "sec/op", LowerIsBetter, ns(2000000)},
				{"go.Scan-8.B/s", "B/s", HigherIsBetter, 150e6},
				{"go.Ops-8.ops/s", "ops/s", HigherIsBetter, 5},
				{"go.Ops-8.widgets/op", "widgets/op", LowerIsBetter, 3},
			}},
		{desc: "no prefix, unit metadata after the results", spec: Spec{Kind: KindGoBench},
			out:  stdout("BenchmarkA 1 5 hits\nBenchmarkA 1 7 hits\nUnit hits better=higher\n"),
			want: []Value{{"A.hits", "hits", HigherIsBetter, 5}, {"A.hits", "hits", HigherIsBetter, 7}}},
		{desc: "unit metadata on an untidied unit", spec: Spec{Kind: KindGoBench},
			out:  stdout("Unit ns/op better=higher\nBenchmarkA 1 5 ns/op\n"),
			want: []Value{{"A.sec/op", "sec/op", HigherIsBetter, ns(5)}}},
		{desc: "select an original unit", spec: Spec{Name: "go", Kind: KindGoBench, Unit: "ns/op"}, out: stdout(goBenchOutput),
			want: []Value{
				{"go.Put/size=10-8.ns/op", "ns/op", LowerIsBetter, 1200},
				{"go.Put/size=10-8.ns/op", "ns/op", LowerIsBetter, 1100},
				{"go.Scan-8.ns/op", "ns/op", LowerIsBetter, 2000000},
			}},
		{desc: "select a unit and override better", spec: Spec{Kind: KindGoBench, Unit: "widgets/op", Better: HigherIsBetter},
			out: stdout(goBenchOutput), want: []Value{{"Ops-8.widgets/op", "widgets/op", HigherIsBetter, 3}}},
		{desc: "malformed lines are skipped when others read", spec: Spec{Kind: KindGoBench},
			out: stdout("BenchmarkA x 5 ns/op\nBenchmarkB 1 5 ns/op\n"), want: []Value{{"B.sec/op", "sec/op", LowerIsBetter, ns(5)}}},
		{desc: "no results", spec: Spec{Name: "go", Kind: KindGoBench}, out: stdout("PASS\nok x 1s\n"),
			err: `metric "go": no Go benchmark results in stdout`, missing: true},
		{desc: "no results, malformed line", spec: Spec{Kind: KindGoBench}, out: stdout("hello\nBenchmarkA 12 5\n"),
			err: `no Go benchmark results in stdout (first malformed line: stdout:2: missing units)`, missing: true},
		{desc: "unit not present", spec: Spec{Kind: KindGoBench, Unit: "ops/s"}, out: stdout("BenchmarkA 1 5 ns/op\n"),
			err: "no Go benchmark results in unit ops/s in stdout", missing: true},
		{desc: "not finite", spec: Spec{Kind: KindGoBench}, out: stdout("BenchmarkA 1 NaN ns/op\n"),
			err: "stdout:1: BenchmarkA: value NaN ns/op is not finite"},
		{desc: "zero is tidied", spec: Spec{Kind: KindGoBench}, out: stdout("BenchmarkA 1 0 ns/op\n"),
			want: []Value{{"A.sec/op", "sec/op", LowerIsBetter, 0}}},
	})
}

func TestExtractBuiltin(t *testing.T) {
	out := Output{Usage: Usage{Wall: 1500 * time.Millisecond, User: time.Second, Sys: 250 * time.Millisecond, MaxRSSKiB: 2048}}
	runExtract(t, []extractCase{
		{desc: "wall", spec: Spec{Kind: KindBuiltin, Builtin: "wall"}, out: out,
			want: []Value{{"time.elapsed_time", "s", LowerIsBetter, 1.5}}},
		{desc: "named sys", spec: Spec{Name: "sys_s", Kind: KindBuiltin, Builtin: "time.system_time"}, out: out,
			want: []Value{{"sys_s", "s", LowerIsBetter, 0.25}}},
		{desc: "maxrss", spec: Spec{Kind: KindBuiltin, Builtin: "maxrss"}, out: out,
			want: []Value{{"time.maximum_resident_set_size", "KiB", LowerIsBetter, 2048}}},
		{desc: "unknown", spec: Spec{Kind: KindBuiltin, Builtin: "rss"}, out: out, err: `unknown builtin "rss"`},
	})
}

func TestBuiltins(t *testing.T) {
	got := Builtins(Usage{Wall: 2 * time.Second, User: 1500 * time.Millisecond, Sys: 100 * time.Millisecond, MaxRSSKiB: 900})
	want := []Value{
		{"time.elapsed_time", "s", LowerIsBetter, 2},
		{"time.user_time", "s", LowerIsBetter, 1.5},
		{"time.system_time", "s", LowerIsBetter, 0.1},
		{"time.maximum_resident_set_size", "KiB", LowerIsBetter, 900},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Builtins() = %+v, want %+v", got, want)
	}
	if names := BuiltinNames(); !reflect.DeepEqual(names, []string{want[0].Name, want[1].Name, want[2].Name, want[3].Name}) {
		t.Fatalf("BuiltinNames() = %q", names)
	}
	for short, long := range map[string]string{"wall": BuiltinWall, "user": BuiltinUser, "sys": BuiltinSys, "maxrss": BuiltinMaxRSS, BuiltinSys: BuiltinSys} {
		if got, ok := CanonicalBuiltin(short); !ok || got != long {
			t.Errorf("CanonicalBuiltin(%q) = %q, %v; want %q", short, got, ok, long)
		}
	}
	if _, ok := CanonicalBuiltin("rss"); ok {
		t.Errorf("CanonicalBuiltin(\"rss\") ok")
	}
}

func TestExtractFromFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "out"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "out", "r.json"), []byte(`{"qps": 900}`), 0o666); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "qps", Kind: KindJSON, Path: ".qps", From: "out/r.json", Better: HigherIsBetter}
	runExtract(t, []extractCase{
		{desc: "file", spec: spec, out: Output{Dir: dir}, want: []Value{{"qps", "", HigherIsBetter, 900}}},
		{desc: "missing file", spec: Spec{Name: "qps", Kind: KindJSON, Path: ".qps", From: "out/none.json"}, out: Output{Dir: dir},
			err: "none.json does not exist", missing: true},
		{desc: "path names the file", spec: Spec{Name: "qps", Kind: KindJSON, Path: ".x", From: "out/r.json"}, out: Output{Dir: dir},
			err: "found nothing in " + filepath.Join(dir, "out", "r.json"), missing: true},
		{desc: "no run directory", spec: spec, out: Output{}, err: "the run has no directory"},
	})
}
