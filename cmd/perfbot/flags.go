package main

import (
	"github.com/spf13/pflag"

	"github.com/perfbot/perfbot/internal/report"
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
