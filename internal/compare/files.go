package compare

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/perfbot/perfbot/internal/metric"
)

// FromFiles reads Go benchmark result files (in parallel: parsing is most
// of the work) and compares them like benchstat: one column per file, the
// first the base, unpaired. The files' warnings (malformed lines, skipped)
// come back beside the table.
//
// A file without a single benchmark result is an error that names it (an
// empty file, a JSON report of another tool), and so is a set of files in
// which no benchmark of the base appears in another file: either would
// otherwise be an empty table, read as "no regression".
func FromFiles(paths []string, alpha float64) (*Table, []error, error) {
	files := make([]*metric.BenchFile, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			files[i], errs[i] = metric.ReadGoBenchFile(p)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	for c, bf := range files {
		if len(bf.Series) == 0 {
			return nil, nil, noResults(paths[c], bf.Warnings)
		}
	}
	var warnings []error
	var cols []Column
	index := map[string]int{}
	var series []Series
	for c, bf := range files {
		warnings = append(warnings, bf.Warnings...)
		cols = append(cols, Column{ID: paths[c]})
		for _, m := range bf.Series {
			key := m.Config + "\x00" + m.Name + "\x00" + m.Unit
			i, ok := index[key]
			if !ok {
				i = len(series)
				index[key] = i
				series = append(series, Series{Metric: m.Name, Unit: m.Unit, Better: m.Better, KPI: true,
					Samples: make([][]Sample, len(paths))})
			}
			ss := make([]Sample, len(m.Values))
			for k, v := range m.Values {
				ss[k] = Sample{Pair: Pair{Round: k + 1}, Value: v}
			}
			series[i].Samples[c] = ss
			cols[c].Runs = max(cols[c].Runs, len(m.Values))
		}
		files[c] = nil // the series hold the values now: let the parse go
	}
	if err := checkShared(paths, series); err != nil {
		return nil, nil, err
	}
	return Build(cols, series, false, alpha), warnings, nil
}

// checkShared is an error when no series has values in the base file and
// in another one: nothing would be compared.
func checkShared(paths []string, series []Series) error {
	if len(paths) < 2 {
		return nil
	}
	for _, s := range series {
		if len(s.Samples[0]) == 0 {
			continue
		}
		for _, col := range s.Samples[1:] {
			if len(col) > 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("no benchmark of %s appears in %s: nothing to compare (the names, units and file configuration lines must match)",
		paths[0], strings.Join(paths[1:], ", "))
}

// noResults says why a file held no Go benchmark result, with a hint for
// the usual mistakes: an empty file, or the JSON report of another tool.
func noResults(path string, warnings []error) error {
	head := make([]byte, 512)
	n := 0
	if f, err := os.Open(path); err == nil {
		n, _ = io.ReadFull(f, head)
		f.Close()
	}
	head = bytes.TrimSpace(head[:n])
	switch {
	case len(head) == 0:
		return fmt.Errorf("%s: empty: no Go benchmark results to compare", path)
	case head[0] == '{' || head[0] == '[':
		return fmt.Errorf("%s: no Go benchmark results: the file is JSON, not the Go benchmark format; the JSON of hyperfine, Google Benchmark, "+
			"pytest-benchmark or criterion is read by a job file's suite (perfbot init --list; docs/suites.md)", path)
	case len(warnings) > 0:
		return fmt.Errorf("%s: no Go benchmark results: %w", path, warnings[0])
	}
	return fmt.Errorf("%s: no Go benchmark results (lines like \"BenchmarkName  1000  123 ns/op\")", path)
}
