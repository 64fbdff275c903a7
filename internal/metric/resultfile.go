package metric

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// Result files. perfbot compare reads the saved output of a benchmark
// program without a job: ReadResultFile detects its format by content and
// turns it into benchfmt results (one per sample), so that benchstat's
// filters and projections (golang.org/x/perf/benchproc) apply to every
// format alike. Go benchmark text keeps its own units (ns/op stays ns/op)
// and its file configuration (pkg:, goos:, ...). The other formats are
// read by the readers of a job's format metrics; each value's unit key is
// the reader's member ("real_time", "mean", ...), and its unit for people
// and its direction are in ResultFile.Units.

// File formats ReadResultFile detects, in the order it tries them.
const (
	FileGo        = "go"               // go test -bench output (benchfmt)
	FileGBench    = "gbench"           // Google Benchmark --benchmark_format=json
	FileHyperfine = "hyperfine"        // hyperfine --export-json
	FilePytest    = "pytest-benchmark" // pytest --benchmark-json
	FileCriterion = "criterion"        // criterion's JSON lines, or one estimates.json
)

// FileFormatsTried names the formats ReadResultFile knows, for messages.
const FileFormatsTried = "Go benchmark text, Google Benchmark JSON, hyperfine JSON, pytest-benchmark JSON, " +
	`criterion (estimates.json, or {"benchmark": ..., "estimates": ...} lines)`

// ErrNoResults is wrapped by the error of a file that holds no result of
// any known format (empty, or another program's output).
var ErrNoResults = errors.New("no benchmark results")

// A ResultFile is one result file read for comparison.
type ResultFile struct {
	Name   string // as given ("-" for standard input)
	Format string // one of the File* formats
	// Results are one per result line (Go) or sample (the others), each
	// with the internal configuration key ".file" set to Name.
	Results []*benchfmt.Result
	// Units describes each unit key of Results' values.
	Units map[string]FileUnit
	// Warnings are lines that could not be read (Go) and notes on what
	// the file lacks (pytest-benchmark without raw timings); reading went
	// on past them.
	Warnings []error
}

// FileUnit is what a unit key of a ResultFile's values means.
type FileUnit struct {
	Unit   string // the unit people read ("ns/op", "s", "ns", "")
	Better Better
}

// ReadResultFile reads data, the content of the result file name, in the
// format its content shows. An empty file, or one of no known format, is
// an error naming the file and the formats tried.
func ReadResultFile(data []byte, name string) (*ResultFile, error) {
	head := bytes.TrimSpace(data)
	if len(head) == 0 {
		return nil, fmt.Errorf("%s: empty file: %w (formats read: %s)", name, ErrNoResults, FileFormatsTried)
	}
	rf := &ResultFile{Name: name, Units: map[string]FileUnit{}}
	var err error
	if head[0] == '{' || head[0] == '[' {
		err = rf.readJSON(data, head)
	} else {
		err = rf.readGo(data)
		if errors.Is(err, ErrNoResults) {
			// criterion lines in a log (the reader skips other lines).
			if vals, cerr := readCriterion(data); cerr == nil {
				rf.Format, err = FileCriterion, nil
				rf.addValues(vals)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rf, nil
}

// readJSON reads the JSON formats, told apart by their top-level keys.
func (rf *ResultFile) readJSON(data, head []byte) error {
	var top map[string]json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(head)).Decode(&top); err != nil {
		return fmt.Errorf("JSON of no known format (%v): %w (formats read: %s)", err, ErrNoResults, FileFormatsTried)
	}
	has := func(k string) bool { _, ok := top[k]; return ok }
	var vals []Value
	var err error
	switch {
	case has("benchmarks") && has("context"):
		rf.Format = FileGBench
		vals, err = readGBench(data)
	case has("benchmarks") && (has("machine_info") || has("commit_info")):
		rf.Format = FilePytest
		return rf.readPytest(data)
	case has("results"):
		rf.Format = FileHyperfine
		return rf.readHyperfine(data)
	case has("benchmark") && has("estimates"):
		rf.Format = FileCriterion
		vals, err = readCriterion(data)
	case has("mean") && has("median"):
		// criterion's new/estimates.json: the id is its folder's.
		rf.Format = FileCriterion
		line, _ := json.Marshal(map[string]any{"benchmark": map[string]string{"full_id": criterionID(rf.Name)},
			"estimates": json.RawMessage(head)})
		vals, err = readCriterion(line)
	default:
		keys := make([]string, 0, len(top))
		for k := range top {
			keys = append(keys, k)
		}
		return fmt.Errorf("JSON of no known format (top-level keys %v): %w (formats read: %s)", keys, ErrNoResults, FileFormatsTried)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", rf.Format, err)
	}
	rf.addValues(vals)
	return nil
}

// criterionID is the benchmark id of criterion's estimates.json at path:
// target/criterion/<id>/new/estimates.json, else the file's name.
func criterionID(path string) string {
	dir := filepath.Dir(path)
	switch filepath.Base(dir) {
	case "new", "base", "change":
		return filepath.Base(filepath.Dir(dir))
	}
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// addValues adds a reader's values, named "<id>.<member>", one result each.
func (rf *ResultFile) addValues(vals []Value) {
	for _, v := range vals {
		id, member := v.Name, "value"
		if i := strings.LastIndexByte(v.Name, '.'); i > 0 {
			id, member = v.Name[:i], v.Name[i+1:]
		}
		u := FileUnit{Unit: v.Unit, Better: v.Better}
		key := member
		if have, ok := rf.Units[key]; ok && have != u {
			// The same member in another unit (Google Benchmark's _cv
			// aggregate is a ratio where the others are times): a key of
			// its own, so that each keeps its unit.
			key = member + "." + unitWord(v.Unit)
		}
		rf.add(id, key, v.Value, u)
	}
}

// unitWord names a unit in a unit key ("ratio" for none).
func unitWord(u string) string {
	if u == "" {
		return "ratio"
	}
	return u
}

func (rf *ResultFile) add(name, unitKey string, v float64, u FileUnit) {
	r := &benchfmt.Result{Name: benchfmt.Name(name), Iters: 1, Values: []benchfmt.Value{{Value: v, Unit: unitKey}}}
	r.SetConfig(".file", rf.Name)
	rf.Results = append(rf.Results, r)
	if _, ok := rf.Units[unitKey]; !ok {
		rf.Units[unitKey] = u
	}
}

// readGo reads Go benchmark text in the file's own units.
func (rf *ResultFile) readGo(data []byte) error {
	rf.Format = FileGo
	br := benchfmt.NewReader(bytes.NewReader(data), rf.Name)
	tidied := map[string]string{} // original unit -> tidied, for the direction
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			rf.Warnings = append(rf.Warnings, rec)
		case *benchfmt.Result:
			r := rec.Clone()
			vals := r.Values[:0]
			for _, v := range r.Values {
				val, unit, origVal, origUnit := tidyValue(v)
				if math.IsNaN(val) || math.IsInf(val, 0) {
					file, line := rec.Pos()
					rf.Warnings = append(rf.Warnings, &benchfmt.SyntaxError{FileName: file, Line: line,
						Msg: fmt.Sprintf("Benchmark%s: value %v %s is not finite", rec.Name, origVal, origUnit)})
					continue
				}
				tidied[origUnit] = unit
				vals = append(vals, benchfmt.Value{Value: origVal, Unit: origUnit})
			}
			if len(vals) == 0 {
				continue
			}
			r.Values = vals
			r.SetConfig(".file", rf.Name)
			rf.Results = append(rf.Results, r)
		}
	}
	if err := br.Err(); err != nil {
		return err
	}
	if len(rf.Results) == 0 {
		hint := `lines like "BenchmarkName  1000  123 ns/op"`
		if len(rf.Warnings) > 0 {
			hint = fmt.Sprintf("first malformed line: %v", rf.Warnings[0])
		}
		return fmt.Errorf("%w of a known format (%s; formats read: %s)", ErrNoResults, hint, FileFormatsTried)
	}
	units := br.Units()
	for orig, t := range tidied {
		rf.Units[orig] = FileUnit{Unit: orig, Better: betterOf(units, t)}
	}
	return nil
}
