package metric

import "time"

// The builtin resource metrics, named as lkp-tests names the fields of its
// "time" monitor. perfbot records all of them for every run.
const (
	BuiltinWall   = "time.elapsed_time"              // wall-clock seconds
	BuiltinUser   = "time.user_time"                 // user CPU seconds of the process tree
	BuiltinSys    = "time.system_time"               // system CPU seconds of the process tree
	BuiltinMaxRSS = "time.maximum_resident_set_size" // peak resident set size, KiB
)

type builtin struct {
	name  string // lkp name
	short string // name accepted in job files
	unit  string
	get   func(Usage) float64
}

var builtins = []builtin{
	{BuiltinWall, "wall", "s", func(u Usage) float64 { return seconds(u.Wall) }},
	{BuiltinUser, "user", "s", func(u Usage) float64 { return seconds(u.User) }},
	{BuiltinSys, "sys", "s", func(u Usage) float64 { return seconds(u.Sys) }},
	{BuiltinMaxRSS, "maxrss", "KiB", func(u Usage) float64 { return float64(u.MaxRSSKiB) }},
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// BuiltinNames returns the lkp-style names of the builtin resource metrics,
// in the order Builtins returns their values.
func BuiltinNames() []string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.name
	}
	return names
}

// CanonicalBuiltin returns the lkp-style name of a builtin metric given
// either that name or its short form (wall, user, sys, maxrss).
func CanonicalBuiltin(name string) (string, bool) {
	b := lookupBuiltin(name)
	if b == nil {
		return "", false
	}
	return b.name, true
}

func lookupBuiltin(name string) *builtin {
	for i := range builtins {
		if b := &builtins[i]; name == b.name || name == b.short {
			return b
		}
	}
	return nil
}

// Builtins returns the builtin resource metrics of one run, in the order of
// BuiltinNames: times in seconds, max RSS in KiB, all lower-is-better.
func Builtins(u Usage) []Value {
	vals := make([]Value, len(builtins))
	for i, b := range builtins {
		vals[i] = Value{Name: b.name, Unit: b.unit, Better: LowerIsBetter, Value: b.get(u)}
	}
	return vals
}

// IsBuiltin reports whether name is one of the figures perfbot records
// itself (lkp's monitors, as opposed to a job's own KPIs): the resource
// metrics of every run, and the figures of a job's monitors ([IsMonitor]).
// Compare shows them after the job's metrics and never gates on them.
func IsBuiltin(name string) bool {
	if IsMonitor(name) {
		return true
	}
	b := lookupBuiltin(name)
	return b != nil && b.name == name
}
