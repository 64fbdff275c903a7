package metric

import (
	"encoding/json"
	"fmt"
)

// The raw timings of hyperfine and pytest-benchmark. A job reads their
// summaries (mean, median, ...: one value per run of the job); a result
// file compared on its own needs the samples behind them, which both
// tools write: hyperfine's "times" (every timed run of the command, in
// seconds) and pytest-benchmark's "stats.data" (every round, in seconds,
// with --benchmark-save-data). Each timing is one sample of the member
// "time". Without them a file gives its summaries, one value each.

func (rf *ResultFile) readHyperfine(data []byte) error {
	summaries, err := readHyperfine(data) // checks the document as a job would
	if err != nil {
		return fmt.Errorf("hyperfine: %w", err)
	}
	var doc struct {
		Results []struct {
			Command string    `json:"command"`
			Times   []float64 `json:"times"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("hyperfine: %v", err)
	}
	raw := true
	for _, r := range doc.Results {
		raw = raw && len(r.Times) > 0
	}
	if !raw {
		rf.Warnings = append(rf.Warnings, fmt.Errorf("%s: hyperfine JSON without \"times\": one summary value per command, too few to test", rf.Name))
		rf.addValues(summaries)
		return nil
	}
	for _, r := range doc.Results {
		for _, t := range r.Times {
			rf.add(LKPName(r.Command), "time", t, FileUnit{Unit: "s", Better: LowerIsBetter})
		}
	}
	return nil
}

func (rf *ResultFile) readPytest(data []byte) error {
	summaries, err := readPytestBenchmark(data)
	if err != nil {
		return fmt.Errorf("pytest-benchmark: %w", err)
	}
	var doc struct {
		Benchmarks []struct {
			Name     string `json:"name"`
			Fullname string `json:"fullname"`
			Stats    struct {
				Data []float64 `json:"data"`
			} `json:"stats"`
		} `json:"benchmarks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("pytest-benchmark: %v", err)
	}
	names := map[string]int{}
	raw := true
	for _, b := range doc.Benchmarks {
		names[b.Name]++
		raw = raw && len(b.Stats.Data) > 0
	}
	if !raw {
		rf.Warnings = append(rf.Warnings, fmt.Errorf("%s: pytest-benchmark JSON without raw timings (run pytest with --benchmark-save-data): "+
			"one summary value per test, too few to test", rf.Name))
		rf.addValues(summaries)
		return nil
	}
	for _, b := range doc.Benchmarks {
		id := b.Name // as readPytestBenchmark names it
		if names[id] > 1 {
			id = b.Fullname
		}
		for _, t := range b.Stats.Data {
			rf.add(LKPName(id), "time", t, FileUnit{Unit: "s", Better: LowerIsBetter})
		}
	}
	return nil
}
