package metric

import (
	"encoding/json"
	"fmt"
)

// hyperfine --export-json. lkp-tests has no parser for it; readHyperfine
// names in lkp's pattern, per command: hyperfine.<command>.mean, .median,
// .min, .max, .stddev, .user and .system, in seconds (the command, or its
// --command-name, normalized as lkp normalizes names: "sleep 0.1" is
// sleep_0.1). Each perfbot run is one hyperfine invocation, which itself
// times the command --runs times; mean is the figure to compare.

func readHyperfine(data []byte) ([]Value, error) {
	var doc struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not hyperfine's JSON: %v: %w", err, ErrMissing)
	}
	if len(doc.Results) == 0 {
		return nil, fmt.Errorf("no results in hyperfine's JSON: %w", ErrMissing)
	}
	var vals []Value
	for _, r := range doc.Results {
		cmd, _ := r["command"].(string)
		id := LKPName(cmd)
		if id == "" {
			return nil, fmt.Errorf("a result without a command")
		}
		for _, f := range []string{"mean", "median", "min", "max", "stddev", "user", "system"} {
			v, ok := r[f].(float64)
			if !ok {
				continue // stddev is null after a single run
			}
			vals = append(vals, Value{Name: id + "." + f, Unit: "s", Better: LowerIsBetter, Value: v})
		}
	}
	return vals, nil
}
