package main

import (
	"github.com/spf13/pflag"

	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/stats"
)

// The command line's one vocabulary: a flag that means the same thing on
// two commands is declared here once, with one name, one unit and one
// help line.

// formatFlag declares -f/--format over the formats of one report kind, the
// first of valid being the default. A format the kind does not print is
// refused while the flags are parsed.
func formatFlag(fl *pflag.FlagSet, p *report.Format, valid []report.Format) {
	v := report.NewFormatFlag(p, valid)
	fl.VarP(v, "format", "f", v.Usage())
}

// cpuFlag declares --cpu: where this machine pins the runs.
func cpuFlag(fl *pflag.FlagSet, p *string) {
	fl.StringVar(p, "cpu", "", "where runs are pinned: auto (the quietest CPU), none, or a CPU number (default: the job's run.cpu)")
}

// storeFlag declares --store: the results store folder.
func storeFlag(fl *pflag.FlagSet, p *string) {
	fl.StringVar(p, "store", "", "results store folder (default: .perfbot next to the job file)")
}

// jobFlag declares --job: which atomic job of a params matrix.
func jobFlag(fl *pflag.FlagSet, p *string) {
	fl.StringVar(p, "job", "", "the atomic job, when the job file has a params matrix")
}

// seedFlag declares --seed: the run order's seed.
func seedFlag(fl *pflag.FlagSet, p *int64) {
	fl.Int64Var(p, "seed", 0, "seed of the run order (default: derived from the job and revisions)")
}

// effectFlag declares --effect in percent, with perfbot's one default.
func effectFlag(fl *pflag.FlagSet, p *float64) {
	fl.Float64Var(p, "effect", stats.DefaultEffectPct, "smallest change in percent that counts: a smaller change is no change, and perfbot warns when this machine is too noisy to see one this large")
}
