// The noise of the simulated lab: stretches of real runs.

package triage

import (
	"bufio"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// simTraceFiles hold real runs of the demo benchmark's base build
// (internal/demo, "./bench all 40", one run per line: text_ms and data_ms),
// taken one after another on the project's 2-vCPU AMD EPYC machine while
// other work shared it; how they were taken is in each file's header.
var simTraceFiles = []string{"runs-unpinned.txt", "runs-cpu1.txt"}

var (
	simTracesOnce sync.Once
	simTraces     [][]float64
	simTracesErr  error
)

// loadSimTraces reads every trace file's columns as log residuals from
// the column's median, in run order.
func loadSimTraces() ([][]float64, error) {
	simTracesOnce.Do(func() {
		for _, name := range simTraceFiles {
			cols, err := readTrace(filepath.Join("testdata", name))
			if err != nil {
				simTracesErr = err
				return
			}
			simTraces = append(simTraces, cols...)
		}
	})
	return simTraces, simTracesErr
}

func readTrace(path string) ([][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cols [][]float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		for len(cols) < len(fields) {
			cols = append(cols, nil)
		}
		for i, s := range fields {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil || !(x > 0) {
				return nil, &os.PathError{Op: "parse", Path: path, Err: err}
			}
			cols[i] = append(cols[i], math.Log(x))
		}
	}
	for _, c := range cols {
		s := slices.Clone(c)
		slices.Sort(s)
		med := s[len(s)/2]
		for i := range c {
			c[i] -= med
		}
	}
	return cols, sc.Err()
}

// simTrace draws one of the real noise traces.
func simTrace(r *rand.Rand) []float64 {
	ts, err := loadSimTraces()
	if err != nil || len(ts) == 0 {
		panic("simulated lab: no noise trace: " + err.Error())
	}
	return ts[r.Intn(len(ts))]
}

// TestSimTraces: the traces load, are long enough for a triage's runs,
// and their noise is what the docs say (a few percent, with the data
// kernel's two modes).
func TestSimTraces(t *testing.T) {
	ts, err := loadSimTraces()
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range ts {
		if len(tr) < 1000 {
			t.Errorf("trace %d has %d runs, want >= 1000", i, len(tr))
		}
		s := slices.Clone(tr)
		slices.Sort(s)
		iqr := s[3*len(s)/4] - s[len(s)/4]
		t.Logf("trace %d: %d runs, interquartile range %.2f%%, 1%%..99%% %.2f%% to %.2f%%", i, len(tr), 100*iqr,
			100*s[len(s)/100], 100*s[99*len(s)/100])
	}
}
