package run

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Allowed returns the CPUs in this process's affinity mask (that of its main
// thread), in increasing order; nil if the mask cannot be read.
func Allowed() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(os.Getpid(), &set); err != nil {
		return nil
	}
	return cpuList(&set)
}

func cpuList(set *unix.CPUSet) []int {
	var cpus []int
	for cpu := 0; cpu < len(set)*64; cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

// checkCPU reports an error unless cpu is in the process's affinity mask.
func checkCPU(cpu int) error {
	allowed := Allowed()
	for _, c := range allowed {
		if c == cpu {
			return nil
		}
	}
	return fmt.Errorf("CPU %d is not in this process's affinity mask (allowed: %s)", cpu, formatCPUs(allowed))
}

// formatCPUs writes a CPU list the way /proc's Cpus_allowed_list does:
// "0-3,6".
func formatCPUs(cpus []int) string {
	if len(cpus) == 0 {
		return "none"
	}
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// onPinnedThread runs f on a fresh locked OS thread whose affinity is
// narrowed to cpu (no pinning when cpu < 0), then restores the thread's mask.
// If the mask cannot be restored the thread is left locked, so it exits with
// its goroutine and no other goroutine ever runs pinned. f gets a function
// that re-pins the same thread to another CPU.
func onPinnedThread(cpu int, f func(pin func(cpu int) error) error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var old unix.CPUSet
		if err := unix.SchedGetaffinity(0, &old); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("reading CPU affinity: %w", err)
			return
		}
		pin := func(cpu int) error {
			var one unix.CPUSet
			one.Set(cpu)
			if err := unix.SchedSetaffinity(0, &one); err != nil {
				return fmt.Errorf("pinning to CPU %d: %w", cpu, err)
			}
			return nil
		}
		var err error
		if cpu >= 0 {
			err = pin(cpu)
		}
		if err == nil {
			err = f(pin)
		}
		if rerr := unix.SchedSetaffinity(0, &old); rerr != nil {
			errc <- err // the thread stays locked and dies with us
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}
