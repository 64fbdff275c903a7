package compare

import "strings"

// profilePrefix starts the names of the perf-profile monitor's figures
// (package monitor): one per symbol in a run's profile.
const profilePrefix = "perf-profile."

// inPoints reports whether a metric's changes are shown in points, not
// percent: shares ("%" names) and the perf-profile monitor's figures
// (percent of the samples), as lkp's tables show them.
func inPoints(name string) bool {
	return strings.HasSuffix(name, "%") || strings.HasPrefix(name, profilePrefix)
}

// AbsentIsZero gives the perf-profile rows a 0 for each run that has a
// profile without their symbol: the monitor stores only the symbols a
// run's samples found (from 0.01 %, as lkp does), so a missing figure is a
// share of 0 in that run, not a missing run (lkp's tables show such
// shares as 0.00). A run has a profile when any perf-profile figure of
// it is stored. The zeros follow the runs' order in the column.
func AbsentIsZero(series []Series, ncols int) {
	for c := 0; c < ncols; c++ {
		var order []Pair
		seen := map[Pair]bool{}
		for _, s := range series {
			if !strings.HasPrefix(s.Metric, profilePrefix) || c >= len(s.Samples) {
				continue
			}
			for _, x := range s.Samples[c] {
				if !seen[x.Pair] {
					seen[x.Pair] = true
					order = append(order, x.Pair)
				}
			}
		}
		if len(order) == 0 {
			continue
		}
		for i := range series {
			s := &series[i]
			if !strings.HasPrefix(s.Metric, profilePrefix) || c >= len(s.Samples) || len(s.Samples[c]) == len(order) {
				continue
			}
			byPair := map[Pair][]Sample{}
			for _, x := range s.Samples[c] {
				byPair[x.Pair] = append(byPair[x.Pair], x)
			}
			filled := make([]Sample, 0, len(order))
			for _, p := range order {
				if xs, ok := byPair[p]; ok {
					filled = append(filled, xs...)
				} else {
					filled = append(filled, Sample{Pair: p})
				}
			}
			s.Samples[c] = filled
		}
	}
}
