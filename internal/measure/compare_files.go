package measure

import (
	"io"

	"github.com/perfbot/perfbot/internal/compare"
)

// FilesConfig is a comparison of result files (perfbot compare OLD NEW):
// nothing is measured.
type FilesConfig struct {
	// Paths are the files, "-" for Stdin (once).
	Paths []string
	Stdin io.Reader
	// Filter, Row, Col and Ignore are benchstat's -filter, -row, -col and
	// -ignore ("": benchstat's defaults; see compare.Files).
	Filter, Row, Col, Ignore string
	// Alpha, EffectPct and FDR are the rules of a comparison, as in
	// CompareConfig.
	Alpha     float64
	EffectPct float64
	FDR       bool
}

func (c FilesConfig) rules() CompareConfig {
	return CompareConfig{Alpha: c.Alpha, EffectPct: c.EffectPct, FDR: c.FDR}
}

// Check checks the levels, naming the flag.
func (c FilesConfig) Check() error { return c.rules().checkRules() }

// CompareFiles compares result files as benchstat does (one column per
// file, or per value of cfg.Col, the first the base, unpaired), each file
// read in the format its content shows (Go benchmark text, Google
// Benchmark, hyperfine, pytest-benchmark, criterion), under the rules of
// a comparison. The files' warnings come back beside it.
func CompareFiles(cfg FilesConfig) (*Comparison, []error, error) {
	if err := cfg.Check(); err != nil {
		return nil, nil, err
	}
	rules := cfg.rules()
	t, warnings, err := compare.FromFiles(compare.Files{Paths: cfg.Paths, Stdin: cfg.Stdin,
		Filter: cfg.Filter, Row: cfg.Row, Col: cfg.Col, Ignore: cfg.Ignore, Alpha: rules.alpha()})
	if err != nil {
		return nil, nil, err
	}
	rules.decide(t)
	return &Comparison{Jobs: []JobComparison{{Table: t}}}, warnings, nil
}
