package gate

import (
	"testing"

	"github.com/perfbot/perfbot/internal/metric"
)

// TestDeterministicCounts: instruction counts by callgrind are one count
// per build, the same in every pair, so every difference is the same
// (all zero when nothing changed). The decision must settle them at the
// first look, not wait for noise that never comes: identical counts are
// Within, a constant change beyond the threshold Regressed, one below it
// Within.
func TestDeterministicCounts(t *testing.T) {
	d := NewDesign(0.05, 2, 60)
	r := Rule{Metric: metric.Instructions, ThresholdPct: 1, Better: metric.LowerIsBetter}
	pairs := func(base, head float64) ([]float64, []float64) {
		b, h := make([]float64, FirstLook), make([]float64, FirstLook)
		for i := range b {
			b[i], h[i] = base, head
		}
		return b, h
	}
	for _, tc := range []struct {
		name       string
		base, head float64
		want       Call
	}{
		{"identical", 459972, 459972, Within},
		{"planted loop +21.7 %", 459972, 559975, Regressed},
		{"layout only +3 instructions", 459972, 459975, Within},
		{"0.5 % more, threshold 1 %", 1e9, 1.005e9, Within},
		{"fewer", 1e9, 0.9e9, Within},
	} {
		b, h := pairs(tc.base, tc.head)
		dec := d.Decide(r, b, h)
		if dec.Call != tc.want {
			t.Errorf("%s: %s (%s); want %s", tc.name, dec.Call, dec.Reason, tc.want)
		}
	}
}
