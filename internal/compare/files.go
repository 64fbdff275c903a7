package compare

import (
	"errors"
	"sync"

	"github.com/perfbot/perfbot/internal/metric"
)

// FromFiles reads Go benchmark result files (in parallel: parsing is most
// of the work) and compares them like benchstat: one column per file, the
// first the base, unpaired. The files' warnings (malformed lines, skipped)
// come back beside the table.
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
	return Build(cols, series, false, alpha), warnings, nil
}
