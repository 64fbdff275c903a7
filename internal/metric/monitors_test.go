package metric

import "testing"

func TestIsMonitor(t *testing.T) {
	for name, want := range map[string]bool{
		"perf-profile.self.cpu-clock.hot_spin":  true,
		"perf-profile.children.cycles-pp.main":  true,
		"perf-stat.total.task-clock":            true,
		"vmstat.pgfault":                        true,
		"meminfo.Cached":                        true,
		"interrupts.LOC:Local_timer_interrupts": true,
		"vmstat.":                               false,
		"vmstat":                                false,
		"stress-ng.mutex.ops_per_sec":           false,
		"text_ms":                               false,
		"time.elapsed_time":                     false,
		"perf-profilex.self":                    false,
		"BenchmarkDecode/vmstat.sec/op":         false,
	} {
		if got := IsMonitor(name); got != want {
			t.Errorf("IsMonitor(%q) = %v, want %v", name, got, want)
		}
		// A monitor's figure is a builtin (not a KPI) for compare.
		if want && !IsBuiltin(name) {
			t.Errorf("IsBuiltin(%q) = false for a monitor's figure", name)
		}
	}
}
