package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

type bmfDoc map[string]map[string]struct {
	Value *float64 `json:"value"`
	Lo    *float64 `json:"lower_value"`
	Hi    *float64 `json:"upper_value"`
}

// TestBMFTable: a table whose head is 20 % slower (samples that do not
// overlap) goes out as the head's median in ns with its interval, the
// change with its interval, and regression 1; an unchanged row 0.
func TestBMFTable(t *testing.T) {
	samples := func(xs ...float64) []compare.Sample {
		ss := make([]compare.Sample, len(xs))
		for i, x := range xs {
			ss[i] = compare.Sample{Pair: compare.Pair{Round: i + 1}, Value: x}
		}
		return ss
	}
	base := []float64{1.00, 1.01, 0.99, 1.02, 0.98, 1.00, 1.01, 0.99}
	slow := make([]float64, len(base))
	for i, x := range base {
		slow[i] = 1.2 * x
	}
	series := []compare.Series{
		{Metric: "parse.time_s", Unit: "s", Better: metric.LowerIsBetter, KPI: true, Samples: [][]compare.Sample{samples(base...), samples(slow...)}},
		{Metric: "Encode-8.B/op", Unit: "B/op", Better: metric.LowerIsBetter, KPI: true, Samples: [][]compare.Sample{samples(64, 64, 64, 64), samples(64, 64, 64, 64)}},
	}
	tab := compare.Build([]compare.Column{{ID: "old"}, {ID: "new"}}, series, false, 0)
	var buf bytes.Buffer
	if err := Write(&buf, tab, Options{Format: FormatBMF}); err != nil {
		t.Fatal(err)
	}
	schematest.ValidateJSON(t, "bmf", buf.Bytes())
	var doc bmfDoc
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	lat := doc["parse.time"]["latency"]
	if lat.Value == nil || math.Abs(*lat.Value-1.2e9) > 0.03e9 || lat.Lo == nil || !(*lat.Lo <= *lat.Value && *lat.Value <= *lat.Hi) {
		t.Errorf("latency %+v: want the head's median, 1.2e9 ns, inside its interval", lat)
	}
	ch := doc["parse.time"]["latency-change-pct"]
	if ch.Value == nil || math.Abs(*ch.Value-20) > 2 || ch.Lo == nil || *ch.Lo <= 0 {
		t.Errorf("change %+v: want about +20 %% with an interval above 0", ch)
	}
	if r := doc["parse.time"]["latency-regression"]; r.Value == nil || *r.Value != 1 {
		t.Errorf("regression %+v, want 1", r)
	}
	if r := doc["Encode-8"]["B/op-regression"]; r.Value == nil || *r.Value != 0 {
		t.Errorf("unchanged row's regression %+v, want 0 (doc %s)", r, buf.String())
	}
}

// TestWriteBMF: the neutral rows a gate writes; NaN is left out, a
// measure twice is an error.
func TestWriteBMF(t *testing.T) {
	var buf bytes.Buffer
	err := WriteBMF(&buf, []BMFRow{
		{Benchmark: "a", Measure: "latency", Value: 10, Lo: 9, Hi: 11, Bounds: true},
		{Benchmark: "a", Measure: "instructions", Value: 5e6},
		{Benchmark: "b", Measure: "latency", Value: math.NaN()},
	})
	if err != nil {
		t.Fatal(err)
	}
	schematest.ValidateJSON(t, "bmf", buf.Bytes())
	var doc bmfDoc
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if m := doc["a"]["latency"]; *m.Lo != 9 || *m.Hi != 11 || doc["a"]["instructions"].Lo != nil {
		t.Errorf("doc %s", buf.String())
	}
	if _, ok := doc["b"]; ok {
		t.Errorf("NaN written: %s", buf.String())
	}
	err = WriteBMF(&bytes.Buffer{}, []BMFRow{{Benchmark: "a", Measure: "m", Value: 1}, {Benchmark: "a", Measure: "m", Value: 2}})
	if err == nil || !strings.Contains(err.Error(), `"m" twice`) {
		t.Errorf("duplicate measure: %v", err)
	}
}
