package suite

import (
	"fmt"
	"io"
	"maps"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/perfbot/perfbot/internal/metric"
)

// JobFile is what perfbot init needs to write a job file for a suite.
type JobFile struct {
	Repo    string            // the repository as the file says it (relative to the file)
	Build   string            // the build command ("": the suite's suggestion, else "true")
	Runs    int               // runs per commit (0: perfbot's default, not written)
	Options map[string]string // the options given; the others are written with their defaults
}

// WriteJob writes a ready job file that runs the suite: the repository, a
// build, and the suite with every option (given, or its default), each with
// its doc. An option without a default, or whose default does not go with
// the options given (sysbench's cpu_max_prime in a memory job), is written
// commented out. It returns the suite as expanded, for the caller to check
// its programs.
func (s *Suite) WriteJob(w io.Writer, jf JobFile) (*Use, error) {
	u, err := s.Expand(jf.Options)
	if err != nil {
		return nil, err
	}
	written := maps.Clone(jf.Options)
	if written == nil {
		written = map[string]string{}
	}
	for _, o := range s.Options {
		if _, given := written[o.Name]; given || o.Default == "" {
			continue
		}
		written[o.Name] = o.Default
		if _, err := s.Expand(written); err != nil {
			delete(written, o.Name) // it does not go with the others
		}
	}
	build, buildDoc := jf.Build, "the build of one commit, run in its worktree"
	switch {
	case build != "":
	case u.Build != "":
		build, buildDoc = u.Build, "what the suite runs needs this build"
	default:
		for _, p := range u.Programs {
			if !p.FromPATH() {
				return nil, fmt.Errorf("the %s suite runs %s, which the job's build makes: give the build command that makes it (perfbot init --build)", s.Name, p.Command)
			}
		}
		build, buildDoc = "true", "nothing to build: the suite runs installed programs; build here (make, ...) when an option names a program in the worktree"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# perfbot job: the %s suite (%s).\n", s.Name, s.Summary)
	fmt.Fprintf(&b, "# Written by perfbot init; docs/suites.md says how suites are used.\n")
	for _, line := range metricLines(u.Metrics) {
		fmt.Fprintf(&b, "# %s\n", line)
	}
	fmt.Fprintf(&b, "repo: %s\n", str(jf.Repo))
	fmt.Fprintf(&b, "build:\n")
	fmt.Fprintf(&b, "  command: %s  # %s\n", str(build), buildDoc)
	fmt.Fprintf(&b, "suite:\n  name: %s\n", s.Name)
	width := 0
	for _, o := range s.Options {
		width = max(width, len(o.Name)+2+len(scalar(u.Options[o.Name])))
	}
	for _, o := range s.Options {
		v, ok := written[o.Name]
		if !ok {
			entry := o.Name + ":"
			if o.Default != "" {
				entry += " " + scalar(o.Default)
			}
			fmt.Fprintf(&b, "  # %-*s  # %s\n", width-2, entry, o.Doc)
			continue
		}
		fmt.Fprintf(&b, "  %-*s  # %s\n", width, o.Name+": "+scalar(v), o.Doc)
	}
	if jf.Runs > 0 {
		fmt.Fprintf(&b, "runs: %d\n", jf.Runs)
	}
	_, err = io.WriteString(w, b.String())
	return u, err
}

// metricLines describe the suite's metrics for the file's header.
func metricLines(specs []metric.Spec) []string {
	var named, rest []string
	for _, m := range specs {
		switch {
		case !m.Family():
			named = append(named, fmt.Sprintf("%s (%s is better)", m.Name, m.Better))
		case m.FamilyPrefix() != "":
			rest = append(rest, m.FamilyPrefix()+".*")
		}
	}
	var lines []string
	if len(named) > 0 {
		lines = append(lines, "Key metrics: "+strings.Join(named, ", ")+".")
	}
	if len(rest) > 0 {
		what := "Every other metric the program prints"
		if len(named) == 0 {
			what = "Metrics: every one the program prints"
		}
		lines = append(lines, what+", as "+strings.Join(rest, ", ")+
			" (name one under metrics: to make it the default --metric).")
	}
	return lines
}

// scalar writes v as a YAML scalar that reads back as v (job files take
// numbers and booleans as written): plain when it can be, else quoted.
func scalar(v string) string { return yamlScalar(v, false) }

// str is scalar for a value that should look like a string: quoted when
// plain it would be a number or a boolean ("true").
func str(v string) string { return yamlScalar(v, true) }

func yamlScalar(v string, asString bool) string {
	var doc struct {
		K yaml.Node `yaml:"k"`
	}
	if !strings.ContainsAny(v, "\n#") && yaml.Unmarshal([]byte("k: "+v), &doc) == nil &&
		doc.K.Kind == yaml.ScalarNode && doc.K.Tag != "!!null" && doc.K.Style == 0 && doc.K.Value == v &&
		(!asString || doc.K.Tag == "!!str") {
		return v
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%q", v)
	}
	s := strings.TrimSuffix(string(out), "\n")
	if strings.Contains(s, "\n") {
		return fmt.Sprintf("%q", v) // a block scalar does not fit on the line
	}
	return s
}
