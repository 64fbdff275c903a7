// The runner a gate measured on, as the report quotes it.

package gate

import (
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/internal/measure"
)

// thisRunner describes this machine (cpu: the pinned CPU, -1 none).
func thisRunner(cpu int) Runner {
	r := Runner{Machine: measure.MachineID(), CPUs: runtime.NumCPU(), Load: math.NaN(), Pinned: cpu}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				r.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		r.Kernel = runtime.GOOS + " " + strings.TrimSpace(string(data))
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 0 {
			if l, err := strconv.ParseFloat(f[0], 64); err == nil {
				r.Load = l
			}
		}
	}
	return r
}
