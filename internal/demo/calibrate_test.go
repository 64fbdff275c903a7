package demo

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestCalibrate calibrates on this host and checks what it returns: the
// pair comes from the scan (the widest ratio a helper can bridge), the
// placement's offsets were checked on the builds (Calibrate fails
// otherwise), the confirmation has fresh pairs, and the verdict follows
// the rule from those pairs. Whether the offset matters is the CPU's
// business: the test logs it and checks both outcomes alike.
func TestCalibrate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the text kernel at 32 offsets and times them (about 15 s)")
	}
	needTools(t)
	var log strings.Builder
	cal, err := Calibrate(context.Background(), CalibrateOptions{CPU: AutoCPU, Log: &log})
	t.Logf("%s", log.String())
	if err != nil {
		t.Fatal(err)
	}
	p := cal.Placement
	if err := p.check(); err != nil {
		t.Fatal(err)
	}
	fast, slow := widest(cal.Scan)
	if p.Fast != fast.Offset || p.Slow != slow.Offset || (p.Slow-p.Fast+64)%64 != p.Hook {
		t.Errorf("placement %v does not bridge the scan's widest pair %d -> %d", p, fast.Offset, slow.Offset)
	}
	for _, s := range cal.Scan {
		if r := s.Median / fast.Median; (s.Offset-fast.Offset+64)%16 == 0 && r > slow.Median/fast.Median {
			t.Errorf("offset %d (ratio %.3f) is slower than the chosen slow offset %d", s.Offset, r, slow.Offset)
		}
	}
	if len(cal.Ratios) != 12 || cal.Need != 10 {
		t.Errorf("%d pairs, %d needed; want 12 and 10", len(cal.Ratios), cal.Need)
	}
	slower := 0
	for _, r := range cal.Ratios {
		if r > 1 {
			slower++
		}
	}
	want := median(cal.Ratios) >= MinTextRatio && slower >= 10
	if cal.Slower != slower || cal.Matters() != want {
		t.Errorf("Matters() = %v with %d slower pairs (counted %d) and median %.3f", cal.Matters(), cal.Slower, slower, median(cal.Ratios))
	}
	// The rule's other side, on offsets the scan found flat (within 3 %
	// of the fastest, 16 bytes apart): a calibration over them only must
	// say that no offset matters, and why.
	var flatOffsets []int
	for base := 0; base < 16 && len(flatOffsets) < 2; base += 2 {
		flatOffsets = flatOffsets[:0]
		for _, s := range cal.Scan {
			if (s.Offset-base)%16 == 0 && s.Median <= 1.03*fast.Median {
				flatOffsets = append(flatOffsets, s.Offset)
			}
		}
	}
	if len(flatOffsets) < 2 {
		t.Logf("no two flat offsets 16 bytes apart on this CPU; the negative case is not checked")
	} else {
		var flog strings.Builder
		flat, err := Calibrate(context.Background(), CalibrateOptions{CPU: cal.CPU, Offsets: flatOffsets, Log: &flog})
		t.Logf("flat offsets %v:\n%s", flatOffsets, flog.String())
		if err != nil {
			t.Fatal(err)
		}
		if flat.Matters() || !strings.Contains(flat.String(), "no offset matters on this CPU") {
			t.Errorf("offsets %v, flat in the scan, matter: %s", flatOffsets, flat)
		}
	}
	if cal.Runs != 32*3+24 || cal.Builds != 1+32+2 || len(cal.Scan) != 32 {
		t.Errorf("%d offsets, %d runs and %d builds, want 32, 120 and 35", len(cal.Scan), cal.Runs, cal.Builds)
	}
}

func TestSignNeed(t *testing.T) {
	for _, c := range []struct{ n, want int }{{10, 9}, {12, 10}, {20, 16}} {
		if got := signNeed(c.n, SignLevel); got != c.want {
			t.Errorf("signNeed(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	if !slices.Equal([]int{signNeed(1, 0.02)}, []int{2}) {
		t.Errorf("signNeed(1) = %d: one pair cannot pass a 2 %% sign test", signNeed(1, 0.02))
	}
}
