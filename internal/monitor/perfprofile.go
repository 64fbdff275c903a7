package monitor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/profile"
)

// Files the perf monitors leave in a run's log folder.
const (
	// PerfData is perf record's raw profile. Symbols are resolved from the
	// binaries, which may be gone later (perfbot gc): ProfileFile holds
	// the report made right after the run.
	PerfData = "perf.data"
	// ProfileFile is `perf report --stdio --sort sym` of PerfData (with a
	// Children column when call graphs were recorded), readable by
	// profile.Read and `perfbot layout diff --profile`.
	ProfileFile = "perf-profile.txt"
	// StatFile is perf stat's output (-x, CSV).
	StatFile = "perf-stat.txt"
)

// profileMin is the smallest share of the profile a symbol needs to be
// stored (lkp's stats/perf-profile keeps symbols from 0.01 %). A run whose
// profile lacks a symbol had less of it than this; compare counts it as 0.
const profileMin = 0.0001

// recordArgs is perf record's command line, up to and with "--", with
// its control FIFOs ctl and ack (see run.Spec.WrapControl).
func recordArgs(perf, event string, m perfProfile, dir, ctl, ack string) []string {
	args := []string{perf, "record", "-q", "-D", "-1", "--control", "fifo:" + ctl + "," + ack,
		// Without it perf record waits a second at exit for its BPF
		// side-band thread (perf 6.1).
		"--no-bpf-event",
		// No copies of every benchmark binary in ~/.debug.
		"-N",
		"-e", event}
	if m.CallGraph {
		args = append(args, "-g")
	}
	if m.Freq > 0 {
		args = append(args, "-F", strconv.Itoa(m.Freq))
	}
	return append(args, "-o", filepath.Join(dir, PerfData), "--")
}

// perfProfile is the options of the perf-profile monitor.
type perfProfile struct {
	CallGraph bool
	Freq      int
}

// report runs perf report on the run's perf.data, writes ProfileFile and
// returns the lkp figures: perf-profile.self.<event>.<symbol> (and
// perf-profile.children.<event>.<symbol> with call graphs), in percent.
func report(ctx context.Context, perf, dir string, callGraph bool) ([]metric.Value, error) {
	data := filepath.Join(dir, PerfData)
	if _, err := os.Stat(data); err != nil {
		return nil, fmt.Errorf("no profile: %w", err)
	}
	args := []string{"report", "--stdio", "--sort", "sym", "-i", data}
	if callGraph {
		args = append(args, "--children", "-g", "none")
	} else {
		args = append(args, "--no-children")
	}
	cmd := exec.CommandContext(ctx, perf, args...)
	out, err := os.Create(filepath.Join(dir, ProfileFile))
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = out, &stderr
	err = cmd.Run()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("perf report %s: %v: %s", strings.Join(args, " "), err, firstLine([]byte(stderr.String())))
	}
	h, err := profile.Read(filepath.Join(dir, ProfileFile))
	if err != nil {
		return nil, err
	}
	return profileValues(h), nil
}

// profileValues names a profile's shares as lkp does: the event as perf
// report names it, ':' turned into '-' (cycles:pp: cycles-pp), symbols
// with white space turned into '_'; shares below profileMin are left out.
func profileValues(h *profile.Hotness) []metric.Value {
	ev := strings.ReplaceAll(strings.Trim(h.Unit, "'"), ":", "-")
	var out []metric.Value
	add := func(kind string, shares map[string]float64) {
		syms := make([]string, 0, len(shares))
		for s, f := range shares {
			if f >= profileMin {
				syms = append(syms, s)
			}
		}
		sort.Strings(syms)
		for _, s := range syms {
			out = append(out, metric.Value{Name: ProfileMetric(kind, ev, s), Unit: "%",
				Better: metric.LowerIsBetter, Value: 100 * shares[s]})
		}
	}
	add("self", h.Funcs)
	add("children", h.Children)
	return out
}

// ProfileMetric is the stored name of a symbol's share of a profile:
// perf-profile.<kind>.<event>.<symbol>, kind self or children.
func ProfileMetric(kind, event, symbol string) string {
	return "perf-profile." + kind + "." + event + "." + strings.Join(strings.Fields(symbol), "_")
}
