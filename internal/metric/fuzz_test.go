package metric

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

// checkExtract checks what every Extract must give: either an error, or at
// least one named, finite value with a direction.
func checkExtract(t *testing.T, s Spec, out Output) {
	vals, err := s.Extract(out)
	if err != nil {
		if vals != nil {
			t.Fatalf("Extract returned values %v with error %v", vals, err)
		}
		var se *SpecError
		if s.Validate() == nil && errors.As(err, &se) {
			t.Fatalf("Extract returned a SpecError %v for a valid spec", err)
		}
		return
	}
	if len(vals) == 0 {
		t.Fatalf("Extract returned no values and no error")
	}
	for _, v := range vals {
		if v.Name == "" || math.IsNaN(v.Value) || math.IsInf(v.Value, 0) || (v.Better != LowerIsBetter && v.Better != HigherIsBetter) {
			t.Fatalf("Extract returned bad value %+v", v)
		}
	}
}

func FuzzRegex(f *testing.F) {
	f.Add(`text_ms: (?P<value>[0-9.]+)`, []byte("text_ms: 12.5\ntext_ms: 13\n"))
	f.Fuzz(func(t *testing.T, pattern string, data []byte) {
		s := Spec{Name: "m", Kind: KindRegex, Pattern: pattern}
		checkExtract(t, s, Output{Stdout: data})
		s.Name = ""
		checkExtract(t, s, Output{Stdout: data})
	})
}

func FuzzJSON(f *testing.F) {
	f.Add(".results[0].ops_per_sec", []byte(`{"results": [{"ops_per_sec": 12}]}`))
	f.Fuzz(func(t *testing.T, path string, data []byte) {
		checkExtract(t, Spec{Name: "m", Kind: KindJSON, Path: path}, Output{Stdout: data})
	})
}

func FuzzGoBench(f *testing.F) {
	f.Add([]byte("BenchmarkA-8 10 5 ns/op 3 B/op\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkExtract(t, Spec{Name: "go", Kind: KindGoBench}, Output{Stdout: data})
		checkExtract(t, Spec{Kind: KindGoBench, Unit: "ns/op"}, Output{Stdout: data})
		bf, err := ReadGoBench(bytes.NewReader(data), "fuzz.txt")
		if err != nil {
			return // only a line too long for bufio.Scanner
		}
		for _, s := range bf.Series {
			if len(s.Values) == 0 || (s.Better != LowerIsBetter && s.Better != HigherIsBetter) {
				t.Fatalf("bad series %+v", s)
			}
			for _, v := range s.Values {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("series %+v holds a value that is not finite", s)
				}
			}
		}
	})
}
