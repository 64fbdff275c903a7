package run

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCalibrate(t *testing.T) {
	cal, err := Calibrate(context.Background(), nil, CalibrateOptions{Rounds: 4, Sample: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	allowed := Allowed()
	if len(cal.CPUs) != len(allowed) {
		t.Fatalf("calibrated %d CPUs, want the %d allowed", len(cal.CPUs), len(allowed))
	}
	if cal.Iterations <= 0 {
		t.Errorf("Iterations = %d", cal.Iterations)
	}
	for i, s := range cal.CPUs {
		if s.CPU != allowed[i] {
			t.Errorf("CPU %d in place of %d", s.CPU, allowed[i])
		}
		if len(s.Samples) != 4 {
			t.Errorf("CPU %d: %d samples, want 4", s.CPU, len(s.Samples))
		}
		if s.Median <= 0 || s.Median < slices.Min(s.Samples) || s.Median > slices.Max(s.Samples) {
			t.Errorf("CPU %d: median %v outside samples %v", s.CPU, s.Median, s.Samples)
		}
		if !(s.CV >= 0) || math.IsInf(s.CV, 0) {
			t.Errorf("CPU %d: CV %v", s.CPU, s.CV)
		}
		if cv := cal.CV(s.CPU); cv != s.CV {
			t.Errorf("CV(%d) = %v, want %v", s.CPU, cv, s.CV)
		}
	}
	if q := cal.Quietest(); !slices.Contains(allowed, q) {
		t.Errorf("Quietest = %d, not an allowed CPU %v", q, allowed)
	}
	if !strings.Contains(cal.String(), "CPU ") {
		t.Errorf("String() = %q", cal.String())
	}
	// Calibration restores this process's threads' masks.
	all := formatCPUs(allowed)
	for task, mask := range threadMasks(t) {
		if mask != all {
			t.Errorf("thread %s has mask %q after calibration, want %q", task, mask, all)
		}
	}
	t.Logf("%v (%d iterations per sample)", cal, cal.Iterations)
}

func TestCalibrateErrors(t *testing.T) {
	ctx := context.Background()
	allowed := Allowed()
	for _, tc := range []struct {
		cpus []int
		opts CalibrateOptions
		want string
	}{
		{[]int{}, CalibrateOptions{}, "no CPUs"},
		{[]int{allowed[0], allowed[0]}, CalibrateOptions{}, "listed twice"},
		{[]int{100000}, CalibrateOptions{}, "CPU 100000 is not in"},
		{nil, CalibrateOptions{Rounds: 1}, "at least 2 rounds"},
		{nil, CalibrateOptions{Sample: -time.Second}, "negative sample"},
	} {
		if _, err := Calibrate(ctx, tc.cpus, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Calibrate(%v, %+v): error %v, want one containing %q", tc.cpus, tc.opts, err, tc.want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Calibrate(cctx, nil, CalibrateOptions{Sample: time.Millisecond}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: error %v, want context.Canceled", err)
	}
}

func TestQuietest(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		cpus []CPUStat
		want int
	}{
		{"empty", nil, -1},
		{"one", []CPUStat{{CPU: 3, Median: 10 * ms, CV: 0.5}}, 3},
		// The notes' machine: vCPU 0 steady at 62 ms, vCPU 1 slower and noisy.
		{"fast and steady", []CPUStat{{CPU: 0, Median: 62 * ms, CV: 0.01}, {CPU: 1, Median: 110 * ms, CV: 0.08}}, 0},
		{"slow one steady", []CPUStat{{CPU: 0, Median: 110 * ms, CV: 0.01}, {CPU: 1, Median: 62 * ms, CV: 0.01}}, 1},
		// 6 % slower but steady beats fastest but noisy.
		{"noise counts", []CPUStat{{CPU: 0, Median: 100 * ms, CV: 0.20}, {CPU: 1, Median: 106 * ms, CV: 0.01}}, 1},
		{"tie", []CPUStat{{CPU: 2, Median: 50 * ms, CV: 0.02}, {CPU: 1, Median: 50 * ms, CV: 0.02}}, 1},
	} {
		c := &Calibration{CPUs: tc.cpus}
		if got := c.Quietest(); got != tc.want {
			t.Errorf("%s: Quietest = %d, want %d", tc.name, got, tc.want)
		}
	}
	if (*Calibration)(nil).Quietest() != -1 {
		t.Errorf("nil calibration")
	}
	if !math.IsNaN((&Calibration{}).CV(0)) {
		t.Errorf("CV of an uncalibrated CPU is not NaN")
	}
}
