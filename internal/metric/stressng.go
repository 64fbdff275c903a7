package metric

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// stress-ng. lkp-tests' parser (programs/stress-ng/parse) reads the
// --metrics-brief table of the log and names, per stressor,
// <stressor>.ops (bogo ops) and <stressor>.ops_per_sec (bogo ops per second
// of real time), and each "miscellaneous metric" <stressor>.<description>,
// the description normalized (LKPName: "nanosecs per mutex" is
// nanosecs_per_mutex). readStressNG gives the same names from stress-ng's
// --yaml file (where the description is written with '-' for ' ') and,
// when the output is not that YAML, from the log lines as lkp does.
// A stressor that did no bogo ops failed (lkp records <stressor>.fail):
// that is an error, so the run is not averaged in. Like lkp, a
// miscellaneous metric of 0 is left out.

// stressNGFixed are the YAML keys of every stressor that are not
// miscellaneous metrics.
var stressNGFixed = map[string]bool{
	"stressor": true, "bogo-ops": true, "bogo-ops-per-second-usr-sys-time": true,
	"bogo-ops-per-second-real-time": true, "wall-clock-time": true, "user-time": true,
	"system-time": true, "cpu-usage-per-instance": true, "max-rss": true,
}

func readStressNG(data []byte) ([]Value, error) {
	var doc struct {
		Metrics []map[string]any `yaml:"metrics"`
	}
	if err := yaml.Unmarshal(data, &doc); err == nil && len(doc.Metrics) > 0 {
		return stressNGYAML(doc.Metrics)
	}
	return stressNGLog(data)
}

func stressNGYAML(metrics []map[string]any) ([]Value, error) {
	var vals []Value
	for _, m := range metrics {
		name, _ := m["stressor"].(string)
		if name == "" {
			return nil, fmt.Errorf("a metrics entry without a stressor")
		}
		ops, err := yamlNumber(m, "bogo-ops")
		if err != nil {
			return nil, fmt.Errorf("stressor %s: %v", name, err)
		}
		if ops == 0 {
			return nil, fmt.Errorf("stressor %s did no bogo ops: it failed (lkp: stress-ng.%s.fail)", name, name)
		}
		rate, err := yamlNumber(m, "bogo-ops-per-second-real-time")
		if err != nil {
			return nil, fmt.Errorf("stressor %s: %v", name, err)
		}
		vals = append(vals,
			Value{Name: name + ".ops", Unit: "bogo-ops", Better: HigherIsBetter, Value: ops},
			Value{Name: name + ".ops_per_sec", Unit: "bogo-ops/s", Better: HigherIsBetter, Value: rate})
		// Miscellaneous metrics, in a stable order.
		var keys []string
		for k := range m {
			if !stressNGFixed[k] {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			v, err := yamlNumber(m, k)
			if err != nil || v == 0 {
				continue // not a figure (or lkp's ".fail")
			}
			misc := LKPName(strings.ReplaceAll(k, "-", " "))
			vals = append(vals, Value{Name: name + "." + misc, Better: rateBetter(misc), Value: v})
		}
	}
	return vals, nil
}

func yamlNumber(m map[string]any, key string) (float64, error) {
	switch v := m[key].(type) {
	case int:
		return float64(v), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%s is %v, not a finite number", key, v)
		}
		return v, nil
	case nil:
		return 0, fmt.Errorf("no %s", key)
	default:
		return 0, fmt.Errorf("%s is %v, not a number", key, v)
	}
}

var (
	stressNGHeader = regexp.MustCompile(`\(secs\)\s+\(secs\)\s+\(secs\)`)
	stressNGMisc   = regexp.MustCompile(`stress-ng: (info|metrc):.*\((average|geometr?ic mean|harmonic mean|total)`)
	stressNGParen  = regexp.MustCompile(` \((average|geometr?ic mean|harmonic mean|total).*\)$`)
)

// stressNGLog reads the log lines the way lkp's parser does.
func stressNGLog(data []byte) ([]Value, error) {
	var vals []Value
	inTable := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.Contains(line, "this stressor is not implemented on this system"),
			strings.Contains(line, "No stress workers invoked"):
			return nil, fmt.Errorf("%s", strings.TrimSpace(line))
		case stressNGHeader.MatchString(line):
			inTable = true
			continue
		case strings.Contains(line, "run time:"):
			inTable = false
		case strings.Contains(line, "fail:") || strings.Contains(line, "warn:"):
			continue
		}
		if !inTable {
			continue
		}
		if stressNGMisc.MatchString(line) {
			items := strings.Fields(stressNGParen.ReplaceAllString(line, ""))
			if len(items) < 6 || items[4] == "0" || items[4] == "0.00" {
				continue
			}
			v, err := parseNumber(items[4])
			if err != nil {
				continue
			}
			misc := LKPName(strings.Join(items[5:], "_"))
			vals = append(vals, Value{Name: items[3] + "." + misc, Better: rateBetter(misc), Value: v})
			continue
		}
		items := strings.Fields(line)
		if len(items) != 10 && len(items) != 12 {
			continue
		}
		if items[4] == "0" {
			return nil, fmt.Errorf("stressor %s did no bogo ops: it failed (lkp: stress-ng.%s.fail)", items[3], items[3])
		}
		ops, err1 := parseNumber(items[4])
		rate, err2 := parseNumber(items[8])
		if err1 != nil || err2 != nil {
			continue
		}
		vals = append(vals,
			Value{Name: items[3] + ".ops", Unit: "bogo-ops", Better: HigherIsBetter, Value: ops},
			Value{Name: items[3] + ".ops_per_sec", Unit: "bogo-ops/s", Better: HigherIsBetter, Value: rate})
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("no stress-ng --yaml metrics and no --metrics-brief table: %w", ErrMissing)
	}
	return vals, nil
}
