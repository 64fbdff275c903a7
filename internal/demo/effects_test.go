package demo

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
)

// cpuEffectsEnv opts in to TestEffects.
const cpuEffectsEnv = "PERFBOT_TEST_CPU_EFFECTS"

// TestEffects proves on this host that the generated commits have the
// effects their labels claim: it builds them with gcc and times base
// against case in alternating pairs, reading the benchmark's own metric
// (the fastest of 40 batches of CPU time in one process), and compares
// the median of the pair ratios with the claim. A measurement that misses
// is retried (up to three tries), since the host is shared; every try is
// logged.
//
// The alignment cases require a slowdown of at least 1.15x from a pure
// shift of code or data. That is a property of the CPU (the demo's sizes
// were measured on AMD Zen 5), not of perfbot or of the generated code:
// another CPU may not care where a loop or a load falls in a cache line.
// So the test runs only when asked for:
//
//	PERFBOT_TEST_CPU_EFFECTS=1 go test -run TestEffects -v ./internal/demo/
func TestEffects(t *testing.T) {
	if os.Getenv(cpuEffectsEnv) != "1" {
		t.Skipf("skipping: TestEffects checks that this CPU slows down by >= 1.15x from a pure alignment shift, a property of the CPU; run it with %s=1 go test -run TestEffects -v ./internal/demo/", cpuEffectsEnv)
	}
	if testing.Short() {
		t.Skip("skipping in -short mode: builds the benchmark and times it for about a minute")
	}
	needTools(t)
	ctx := context.Background()
	tr := create(t, Options{History: HistoryTriage})
	dm := create(t, Options{History: HistoryDemo})
	textPad, err := padObject(ctx, tr.Dir, t.TempDir(), DefaultPlacement.RestorePad(), 0)
	if err != nil {
		t.Fatal(err)
	}
	dataPad, err := padObject(ctx, tr.Dir, t.TempDir(), 0, DataRestorePad)
	if err != nil {
		t.Fatal(err)
	}
	base, text, data, real, none := tr.ByLabel("base").Hash, tr.ByLabel("text-alignment").Hash,
		tr.ByLabel("data-alignment").Hash, tr.ByLabel("real-regression").Hash, tr.ByLabel("no-change").Hash
	tb := newBuilder(t, tr)
	bins := tb.buildAll(t,
		bj(base), bj(text), bj(data), bj(real), bj(none),
		bj(base, alignFlags), bj(text, alignFlags), bj(data, alignFlags), bj(real, alignFlags),
		bj(text, "EXTRA_OBJS="+textPad), bj(data, "EXTRA_OBJS="+dataPad))
	bBase, bText, bData, bReal, bNone := bins[0], bins[1], bins[2], bins[3], bins[4]
	bBaseAl, bTextAl, bDataAl, bRealAl := bins[5], bins[6], bins[7], bins[8]
	bTextPad, bDataPad := bins[9], bins[10]
	db := newBuilder(t, dm)
	dbins := db.buildAll(t, bj(dm.ByLabel("text-alignment").Hash), bj(dm.ByLabel("real-regression").Hash))

	at := func(min float64) func(float64) bool { return func(r float64) bool { return r >= min } }
	flat := func(r float64) bool { return math.Abs(r-1) < 0.05 }
	for _, m := range []struct {
		name   string
		a, b   string
		metric string
		ok     func(float64) bool
		want   string
	}{
		{"text-alignment/plain", bBase, bText, MetricText, at(1.15), ">= 1.15"},
		{"text-alignment/aligned", bBaseAl, bTextAl, MetricText, flat, "within 5 %"},
		{"text-alignment/padded", bBase, bTextPad, MetricText, flat, "within 5 %"},
		{"text-alignment/other-metric", bBase, bText, MetricData, flat, "within 5 %"},
		{"data-alignment/plain", bBase, bData, MetricData, at(1.15), ">= 1.15"},
		{"data-alignment/padded", bBase, bDataPad, MetricData, flat, "within 5 %"},
		{"data-alignment/aligned", bBaseAl, bDataAl, MetricData, at(1.15), ">= 1.15 (code alignment does not hide it)"},
		{"data-alignment/other-metric", bBase, bData, MetricText, flat, "within 5 %"},
		{"real-regression/plain", bBase, bReal, MetricText, at(1.2), ">= 1.2"},
		{"real-regression/aligned", bBaseAl, bRealAl, MetricText, at(1.2), ">= 1.2"},
		{"no-change/text", bBase, bNone, MetricText, flat, "within 5 %"},
		{"no-change/data", bBase, bNone, MetricData, flat, "within 5 %"},
		{"demo/real-regression", dbins[0], dbins[1], MetricText, at(1.8), ">= 1.8"},
	} {
		t.Run(m.name, func(t *testing.T) {
			args := []string{"text", "40"}
			if m.metric == MetricData {
				args[0] = "data"
			}
			const tries, pairs = 3, 12
			for try := 1; ; try++ {
				res, err := runAB(ctx, m.a, m.b, args, m.metric, pairs)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("try %d: %s: %v; pair ratios %s", try, m.name, res, fmtRatios(res.Ratios))
				if m.ok(res.Ratio) {
					return
				}
				if try == tries {
					t.Fatalf("%s: ratio %.3f in %d tries, want %s", m.name, res.Ratio, tries, m.want)
				}
			}
		})
	}
}

func fmtRatios(rs []float64) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.2f", r)
	}
	return s
}
