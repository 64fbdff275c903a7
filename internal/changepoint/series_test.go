package changepoint

import (
	"math"
	"strings"
	"testing"
)

func TestFromValues(t *testing.T) {
	for _, tc := range []struct {
		desc    string
		pts     []Point
		conf    float64
		wantErr string
		check   func(t *testing.T, s Series)
	}{
		{desc: "plain values", pts: []Point{{Value: 1}, {Value: math.E}}, check: func(t *testing.T, s Series) {
			if s.Chained || s.Len() != 2 || s.Log[1] != 1 || s.Weight[0] != 1 || s.SE[1] != 0 {
				t.Errorf("got %+v", s)
			}
		}},
		{desc: "interval gives the SE of the log", pts: []Point{{Value: 1, Lo: math.Exp(-1.96), Hi: math.Exp(1.96), Weight: 3}}, conf: 0.95, check: func(t *testing.T, s Series) {
			if math.Abs(s.SE[0]-1) > 1e-3 || s.Weight[0] != 3 {
				t.Errorf("got SE %v weight %v", s.SE[0], s.Weight[0])
			}
		}},
		{desc: "zero value", pts: []Point{{Value: 0}}, wantErr: "point 0: value 0 is not positive"},
		{desc: "NaN value", pts: []Point{{Value: 1}, {Value: math.NaN()}}, wantErr: "point 1: value NaN"},
		{desc: "negative weight", pts: []Point{{Value: 1, Weight: -1}}, wantErr: "weight -1"},
		{desc: "interval not around the value", pts: []Point{{Value: 1, Lo: 1.1, Hi: 1.2}}, conf: 0.95, wantErr: "interval [1.1, 1.2]"},
		{desc: "interval without confidence", pts: []Point{{Value: 1, Lo: 0.9, Hi: 1.1}}, wantErr: "confidence 0"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			s, err := FromValues(tc.pts, tc.conf)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
		})
	}
}

func TestFromSteps(t *testing.T) {
	s, err := FromSteps(2, []Point{{Value: 1.1}, {Value: 1 / 1.1}, {Value: 1.5, Lo: 1.4, Hi: 1.6}}, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{2, 2.2, 2, 3}
	got := s.Values()
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("Values() = %v, want %v", got, want)
			break
		}
	}
	if !s.Chained || s.SE[0] != 0 || s.SE[1] != 0 || s.SE[3] == 0 {
		t.Errorf("chained %v, SE %v", s.Chained, s.SE)
	}
	if sl := s.Slice(1, 3); sl.Len() != 2 || !sl.Chained || sl.Log[0] != s.Log[1] {
		t.Errorf("Slice(1, 3) = %+v", sl)
	}
	for _, tc := range []struct {
		first float64
		steps []Point
		want  string
	}{
		{first: 0, want: "first value 0"},
		{first: 1, steps: []Point{{Value: 1}, {Value: -2}}, want: "step 1: value -2"},
	} {
		if _, err := FromSteps(tc.first, tc.steps, 0.95); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("FromSteps(%v, %v): error %v, want %q", tc.first, tc.steps, err, tc.want)
		}
	}
}
