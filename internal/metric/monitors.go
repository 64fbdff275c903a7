package metric

import "strings"

// MonitorPrefixes start the names of the figures that a job's monitors
// (package monitor) store beside its metrics, named as lkp-tests names
// them: perf-profile.self.<event>.<symbol>, perf-stat.total.<event>,
// vmstat.<field>, meminfo.<field>, interrupts.<irq>.
var MonitorPrefixes = []string{"perf-profile.", "perf-stat.", "vmstat.", "meminfo.", "interrupts."}

// IsMonitor reports whether name is a monitor's figure (see
// MonitorPrefixes).
func IsMonitor(name string) bool {
	for _, p := range MonitorPrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return true
		}
	}
	return false
}
