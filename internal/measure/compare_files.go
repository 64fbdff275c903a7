package measure

import "github.com/perfbot/perfbot/internal/compare"

// CompareFiles compares Go benchmark result files as benchstat does (one
// column per file, the first the base, unpaired; nothing is measured),
// under the rules of a comparison: cfg's Alpha, EffectPct and FDR (its
// other fields are not used). The files' warnings come back beside it.
func CompareFiles(paths []string, cfg CompareConfig) (*Comparison, []error, error) {
	if err := cfg.checkRules(); err != nil {
		return nil, nil, err
	}
	t, warnings, err := compare.FromFiles(paths, cfg.alpha())
	if err != nil {
		return nil, nil, err
	}
	cfg.decide(t)
	return &Comparison{Jobs: []JobComparison{{Table: t}}}, warnings, nil
}
