package job

import (
	"fmt"
	"strings"

	"github.com/perfbot/perfbot/internal/metric"
)

// MetricRef is a metric name resolved against a job: how runs store it,
// which direction is better, and whether that is known before any run.
type MetricRef struct {
	// Name is the name runs store the metric under: a metric's own name
	// (also a named builtin's), builtins otherwise by their lkp names
	// ("wall" is "time.elapsed_time").
	Name string
	// Better is the direction the job file declares (lower by default);
	// 0 for a member of a family (Go benchmarks, regexes with a "name"
	// group, formats) and for a format metric without better:, whose
	// direction the format gives: it is read from the first runs.
	Better metric.Better
	// Family is true when the name matched a family's prefix, not a
	// metric of its own: a run may or may not print it.
	Family bool
}

// ResolveMetric resolves a metric name against the job; "" means the job's
// first metric. It is the one resolver of the commands that take --metric
// (bisect, triage, watch). A name matches, in this order: a metric of the
// job by its name; a builtin resource figure (wall, user, sys, maxrss or
// their time.* names); a member of a family, "<prefix>.<member>" for a
// family with that prefix, or any name for a family without one. The error
// lists what the job produces; callers prefix it with the name or the flag.
func (j *Job) ResolveMetric(name string) (MetricRef, error) {
	if name == "" {
		if len(j.Metrics) == 0 {
			return MetricRef{}, fmt.Errorf("job %s (%s) has no metrics", j.Name, j.File)
		}
		s := j.Metrics[0]
		if isFamily(s) {
			return MetricRef{}, fmt.Errorf("job %s (%s): its first metric is a family (%s); name one of its members with --metric", j.Name, j.File, specName(s))
		}
		name = s.Name
		if name == "" && s.Kind == metric.KindBuiltin {
			name, _ = metric.CanonicalBuiltin(s.Builtin)
		}
	}
	for _, s := range j.Metrics {
		if s.Name == name && !isFamily(s) {
			b := s.Better
			if b == 0 && s.Kind != metric.KindFormat {
				b = metric.LowerIsBetter
			}
			return MetricRef{Name: name, Better: b}, nil
		}
	}
	if c, ok := metric.CanonicalBuiltin(name); ok {
		return MetricRef{Name: c, Better: metric.LowerIsBetter}, nil
	}
	for _, s := range j.Metrics {
		if prefix := s.FamilyPrefix(); isFamily(s) && (prefix == "" || strings.HasPrefix(name, prefix+".")) {
			return MetricRef{Name: name, Family: true}, nil
		}
	}
	return MetricRef{}, fmt.Errorf("job %s (%s) does not produce it; it produces %s, and the builtins wall, user, sys and maxrss",
		j.Name, j.File, strings.Join(j.MetricNames(), ", "))
}

// MetricNames names the job's metrics as an error message lists them: a
// family as its prefix and ".*".
func (j *Job) MetricNames() []string {
	var names []string
	for _, s := range j.Metrics {
		names = append(names, specName(s))
	}
	return names
}

// isFamily reports whether a spec yields many metrics (Go benchmarks, a
// regex with a "name" group, a format without a name).
func isFamily(s metric.Spec) bool { return s.Family() }

// specName names a spec for the error: its name, or its family's pattern.
func specName(s metric.Spec) string {
	switch {
	case !isFamily(s) && s.Name != "":
		return s.Name
	case !isFamily(s):
		return s.Builtin
	case s.FamilyPrefix() != "":
		return s.FamilyPrefix() + ".*"
	case s.Kind == metric.KindGoBench:
		return "any Go benchmark's <name>.<unit>"
	}
	return "the names its regex captures"
}

// Pick returns the atomic job named name of a loaded job file, or its only
// one when name is "" (triage and bisect work on one atomic job); the
// error lists the names to choose from.
func Pick(path string, jobs []*Job, name string) (*Job, error) {
	if name == "" && len(jobs) == 1 {
		return jobs[0], nil
	}
	var names []string
	for _, j := range jobs {
		if j.Name == name {
			return j, nil
		}
		names = append(names, j.Name)
	}
	if name == "" {
		return nil, fmt.Errorf("%s expands into %d atomic jobs; pick one with --job: %s", path, len(jobs), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("--job %q: %s has no such atomic job; it has: %s", name, path, strings.Join(names, ", "))
}
