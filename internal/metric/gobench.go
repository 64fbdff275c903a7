package metric

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// Units. Go benchmark values are read with golang.org/x/perf/benchfmt, whose
// Reader tidies units the way benchstat prints them: ns/op becomes sec/op
// (value scaled by 1e-9) and MB/s becomes B/s (scaled by 1e6); other units
// are kept. perfbot keeps the tidied units, so a gobench metric is named
// e.g. "Encode/size=1k-8.sec/op" and its values are in seconds. A gobench
// Spec whose Unit is an original unit ("ns/op") selects that unit and keeps
// its original values instead.
//
// Direction. A unit's "better" comes from unit metadata in the input
// ("Unit ns/op better=higher"), else benchfmt's defaults (sec/op, B/op,
// allocs/op lower; B/s higher), else the convention that rates ("/s",
// "/sec") are higher-is-better and everything else lower-is-better.

// tidyValue returns v in benchstat's tidied unit, and its original value
// and unit. benchfmt's Reader tidies only values that tidying changes, so
// "0 ns/op" or "+Inf ns/op" would stay in ns/op and split a series.
func tidyValue(v benchfmt.Value) (val float64, unit string, origVal float64, origUnit string) {
	if v.OrigUnit != "" {
		return v.Value, v.Unit, v.OrigValue, v.OrigUnit
	}
	val, unit = benchunit.Tidy(v.Value, v.Unit)
	return val, unit, v.Value, v.Unit
}

// betterOf returns the direction of unit (a tidied unit) given the unit
// metadata read so far.
func betterOf(units benchfmt.UnitMetadataMap, unit string) Better {
	switch units.GetBetter(unit) {
	case 1:
		return HigherIsBetter
	case -1:
		return LowerIsBetter
	}
	if strings.HasSuffix(unit, "/s") || strings.HasSuffix(unit, "/sec") {
		return HigherIsBetter
	}
	return LowerIsBetter
}

// extractGoBench reads every benchmark result line of data. Each value of a
// result line becomes a Value named "<Spec.Name>.<benchmark>.<unit>" (without
// the prefix when Spec.Name is empty), where benchmark is the full name
// without "Benchmark" (sub-benchmarks and the GOMAXPROCS suffix included, as
// benchstat's .fullname). Several lines of one benchmark give several values
// of one metric. Lines benchfmt cannot parse are ignored when others gave
// values, and mentioned in the error when none did.
func (s *Spec) extractGoBench(data []byte, where string) ([]Value, error) {
	r := benchfmt.NewReader(bytes.NewReader(data), where)
	var (
		vals   []Value
		tidied []string // unit to look up Better for, per value
		synErr error
	)
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			if synErr == nil {
				synErr = rec
			}
		case *benchfmt.Result:
			for _, v := range rec.Values {
				val, unit, origVal, origUnit := tidyValue(v)
				tidiedUnit := unit
				if s.Unit != "" {
					switch s.Unit {
					case unit:
					case origUnit:
						unit, val = origUnit, origVal
					default:
						continue
					}
				}
				if math.IsNaN(val) || math.IsInf(val, 0) {
					file, line := rec.Pos()
					return nil, fmt.Errorf("metric %q: %s:%d: Benchmark%s: value %v %s is not finite",
						s.displayName(), file, line, rec.Name, origVal, origUnit)
				}
				vals = append(vals, Value{Name: joinName(s.Name, string(rec.Name)+"."+unit), Unit: unit, Value: val})
				tidied = append(tidied, tidiedUnit)
			}
		}
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("metric %q: reading Go benchmark results: %v", s.displayName(), err)
	}
	if len(vals) == 0 {
		what := "no Go benchmark results"
		if s.Unit != "" {
			what = "no Go benchmark results in unit " + s.Unit
		}
		if synErr != nil {
			return nil, fmt.Errorf("metric %q: %s in %s (first malformed line: %v): %w", s.displayName(), what, where, synErr, ErrMissing)
		}
		return nil, fmt.Errorf("metric %q: %s in %s: %w", s.displayName(), what, where, ErrMissing)
	}
	// Unit metadata may follow the results it describes, so directions are
	// settled once everything is read.
	units := r.Units()
	for i := range vals {
		vals[i].Better = s.betterOr(betterOf(units, tidied[i]))
	}
	return vals, nil
}

// A BenchFile is a Go benchmark result file read for comparison, grouped
// the way benchstat groups it by default.
type BenchFile struct {
	Name   string    // the file name given to the reader
	Series []*Series // in the order first seen
	// Warnings are the lines that could not be read (*benchfmt.SyntaxError,
	// printing file:line: msg) and values that were not finite; reading
	// went on past them.
	Warnings []error
}

// A Series is every value of one benchmark in one unit.
type Series struct {
	// Config is the file-level configuration in effect for the results
	// (e.g. "goos=linux goarch=amd64 pkg=example.com/x cpu=..."), in the
	// order the keys appeared: benchstat's default table key ".config".
	Config string
	// Name is the full benchmark name without "Benchmark", including
	// sub-benchmark keys and the GOMAXPROCS suffix: benchstat's default row
	// key ".fullname".
	Name   string
	Unit   string // tidied, as benchstat prints it (sec/op, B/s, B/op, ...)
	Better Better
	Values []float64 // in file order
}

// ReadGoBenchFile reads a Go benchmark result file (the output of go test
// -bench, possibly concatenated runs) into series. Malformed lines become
// Warnings; only I/O errors fail.
func ReadGoBenchFile(path string) (*BenchFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadGoBench(f, path)
}

// ReadGoBench is ReadGoBenchFile reading from r; fileName is used in
// positions.
func ReadGoBench(r io.Reader, fileName string) (*BenchFile, error) {
	bf := &BenchFile{Name: fileName}
	index := make(map[string]*Series)
	var (
		key []byte // config \x00 name \x00 unit, reused
		// The series of the previous result line, which the next line
		// usually continues (go test -count prints a benchmark's lines
		// together): a fast path around the map.
		lastPrefix []byte
		last       []*Series
	)
	br := benchfmt.NewReader(r, fileName)
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			bf.Warnings = append(bf.Warnings, rec)
		case *benchfmt.Result:
			key = key[:0]
			for _, c := range rec.Config {
				if !c.File {
					continue
				}
				if len(key) > 0 {
					key = append(key, ' ')
				}
				key = append(key, c.Key...)
				key = append(key, '=')
				key = append(key, c.Value...)
			}
			cfgLen := len(key)
			key = append(key, 0)
			key = append(key, rec.Name...)
			nameEnd := len(key)
			if bytes.Equal(key, lastPrefix) && len(rec.Values) == len(last) && appendSame(last, rec.Values) {
				continue
			}
			lastPrefix = append(lastPrefix[:0], key...)
			last = last[:0]
			for _, v := range rec.Values {
				val, unit, origVal, origUnit := tidyValue(v)
				if math.IsNaN(val) || math.IsInf(val, 0) {
					file, line := rec.Pos()
					bf.Warnings = append(bf.Warnings, &benchfmt.SyntaxError{FileName: file, Line: line,
						Msg: fmt.Sprintf("Benchmark%s: value %v %s is not finite", rec.Name, origVal, origUnit)})
					lastPrefix = lastPrefix[:0] // no fast path past a skipped value
					continue
				}
				key = append(key[:nameEnd], 0)
				key = append(key, unit...)
				s := index[string(key)]
				if s == nil {
					s = &Series{Config: string(key[:cfgLen]), Name: string(rec.Name), Unit: unit}
					index[string(key)] = s
					bf.Series = append(bf.Series, s)
				}
				s.Values = append(s.Values, val)
				last = append(last, s)
			}
		}
	}
	if err := br.Err(); err != nil {
		return nil, err
	}
	units := br.Units()
	for _, s := range bf.Series {
		s.Better = betterOf(units, s.Unit)
	}
	return bf, nil
}

// appendSame appends vals to series when they are in the same units, in
// the same order, and all finite; otherwise it changes nothing and reports
// false.
func appendSame(series []*Series, vals []benchfmt.Value) bool {
	for i, v := range vals {
		val, unit, _, _ := tidyValue(v)
		if unit != series[i].Unit || math.IsNaN(val) || math.IsInf(val, 0) {
			return false
		}
	}
	for i, v := range vals {
		val, _, _, _ := tidyValue(v)
		series[i].Values = append(series[i].Values, val)
	}
	return true
}
