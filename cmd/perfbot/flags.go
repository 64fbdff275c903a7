package main

import (
	"fmt"
	"io"

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

// aliasOf is the annotation of a deprecated alias: the flag it names.
const aliasOf = "perfbot-alias-of"

// deprecatedAlias declares --old as a hidden, deprecated name of the flag
// --name, declared before: a value given to --old is set on --name, so
// that the command and its "to reproduce" line see only --name, and w is
// told to use --name. (pflag's MarkDeprecated would print its notice
// where cobra prints help: on stdout, into a JSON report.)
func deprecatedAlias(fl *pflag.FlagSet, old, name string, w io.Writer) {
	fl.Var(aliasValue{fl: fl, old: old, name: name, w: w}, old, "the old name of --"+name)
	f := fl.Lookup(old)
	f.NoOptDefVal = fl.Lookup(name).NoOptDefVal
	f.Hidden = true
	f.Annotations = map[string][]string{aliasOf: {name}}
}

// aliasValue is the value of a deprecated alias: the flag it names.
type aliasValue struct {
	fl        *pflag.FlagSet
	old, name string
	w         io.Writer
}

func (a aliasValue) Set(v string) error {
	fmt.Fprintf(a.w, "perfbot: --%s is deprecated: use --%s\n", a.old, a.name)
	return a.fl.Set(a.name, v)
}
func (a aliasValue) String() string { return a.fl.Lookup(a.name).Value.String() }
func (a aliasValue) Type() string   { return a.fl.Lookup(a.name).Value.Type() }
