package profile

import (
	"math"
	"testing"
)

// TestPerfReportChildren: a report with call graphs gives each symbol's
// children fraction too; one without gives none.
func TestPerfReportChildren(t *testing.T) {
	h, err := Read("testdata/perf-report-children.txt")
	if err != nil {
		t.Fatal(err)
	}
	for sym, want := range map[string]float64{"__libc_start_call_main": 0.982, "hot_spin": 0.982} {
		if got := h.Children[sym]; math.Abs(got-want) > 1e-9 {
			t.Errorf("children of %s = %v, want %v", sym, got, want)
		}
	}
	for sym, f := range h.Children {
		if f < h.Funcs[sym]-1e-9 || f > 1 {
			t.Errorf("%s: children %v, self %v", sym, f, h.Funcs[sym])
		}
	}
	h, err = Read("testdata/perf-report-self.txt")
	if err != nil {
		t.Fatal(err)
	}
	if h.Children != nil {
		t.Errorf("a report without call graphs has children: %v", h.Children)
	}
}
