package job

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/suite"
)

// Suites. "suite: NAME" or "suite: {name: NAME, option: value, ...}" stands
// for run.command and the metrics: the suite supplies both (package
// suite), the build stays the job's. run: may still give timeout, env and
// cpu; metrics: may add metrics, which come first (a named metric of the
// suite's format replaces the suite's own of that name, and a metric named
// there becomes the job's default --metric). Option values may hold params
// (${stressor}); each atomic job expands the suite with its values, so
// metric names follow them (stress-ng.${stressor}.ops_per_sec).

// suiteRef is the suite: of a job file, before params are applied.
type suiteRef struct {
	name string
	node *yaml.Node // the value of suite:
	opts []suiteOpt
}

type suiteOpt struct {
	key, value string
	node       *yaml.Node
}

// readSuite reads the suite: value.
func (p *parser) readSuite(n *yaml.Node) *suiteRef {
	ref := &suiteRef{node: n}
	var nameNode *yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		ref.name, _ = p.nonEmpty(n, "suite")
		nameNode = n
	case yaml.MappingNode:
		for _, f := range p.fields(n, "suite", nil) {
			field := join("suite", f.key)
			if f.key == "name" {
				ref.name, _ = p.nonEmpty(f.v, field)
				nameNode = f.v
				continue
			}
			if f.v.Kind != yaml.ScalarNode {
				p.errorf(f.v, field, "expected a value, got %s", describe(f.v))
				continue
			}
			if v, ok := p.str(f.v, field); ok && !p.hasNUL(f.v, field, v) {
				ref.opts = append(ref.opts, suiteOpt{f.key, v, f.k})
			}
		}
		if nameNode == nil {
			p.errorf(n, "suite.name", "missing (the suite to run: %s)", strings.Join(suite.Names(), ", "))
			return nil
		}
	default:
		p.errorf(n, "suite", "expected a suite name or a mapping {name: NAME, option: value, ...}, got %s", describe(n))
		return nil
	}
	if ref.name == "" {
		return nil
	}
	s, ok := suite.Lookup(ref.name)
	if !ok {
		msg := fmt.Sprintf("unknown suite %q", ref.name)
		if sg := suggestion(ref.name, suite.Names()); sg != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", sg)
		}
		p.errorf(nameNode, "suite.name", "%s; perfbot has %s", msg, strings.Join(suite.Names(), ", "))
		return nil
	}
	var known []string
	for _, o := range s.Options {
		known = append(known, o.Name)
	}
	bad := false
	for _, o := range ref.opts {
		if !slices.Contains(known, o.key) {
			msg := fmt.Sprintf("suite %s has no option %q", ref.name, o.key)
			if sg := suggestion(o.key, known); sg != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sg)
			}
			p.errorf(o.node, join("suite", o.key), "%s; it has %s", msg, strings.Join(known, ", "))
			bad = true
		}
	}
	if bad {
		return nil
	}
	return ref
}

// suiteParamRefs reports ${name} in option values that names no param:
// option values are not read by a shell, so nothing else could expand it.
func (p *parser) suiteParamRefs(ref *suiteRef, params []param) {
	for _, o := range ref.opts {
		for _, m := range paramRef.FindAllStringSubmatch(o.value, -1) {
			if !slices.ContainsFunc(params, func(prm param) bool { return prm.name == m[1] }) {
				p.errorf(o.node, join("suite", o.key), "${%s} is not a param (suite options take params, as they are; nothing else is expanded)", m[1])
			}
		}
	}
}

// applySuite expands the suite for each atomic job: its run command, and
// its metrics after the job's own.
func (p *parser) applySuite(ref *suiteRef, jobs []*Job) {
	reported := map[string]bool{}
	for _, j := range jobs {
		opts := make(map[string]string, len(ref.opts))
		for _, o := range ref.opts {
			opts[o.key] = substitute(o.value, j.Params)
		}
		u, err := suite.Expand(ref.name, opts)
		if err != nil {
			at, field, msg := ref.node, "suite", err.Error()
			var oe *suite.OptionError
			if errors.As(err, &oe) && oe.Option != "" {
				field = join("suite", oe.Option)
				for _, o := range ref.opts {
					if o.key == oe.Option {
						at = o.node
						if strings.Contains(o.value, "${") {
							msg += " (in " + j.Name + ")" // the value is a param's
						}
					}
				}
			}
			if !reported[msg] {
				reported[msg] = true
				p.errorf(at, field, "%s", msg)
			}
			continue
		}
		j.Suite = u
		j.Run.Command = u.Command
		j.Metrics = mergeMetrics(j.Metrics, u.Metrics)
	}
}

// mergeMetrics puts the job's own metrics first, then the suite's, less a
// single metric the job names itself and a family the job reads itself.
func mergeMetrics(own, suite []metric.Spec) []metric.Spec {
	out := slices.Clone(own)
	for _, s := range suite {
		dup := slices.ContainsFunc(own, func(o metric.Spec) bool {
			if s.Family() {
				return o.Family() && o.Kind == s.Kind && o.Format == s.Format && o.Name == s.Name && o.From == s.From
			}
			return !o.Family() && o.Name == s.Name
		})
		if !dup {
			out = append(out, s)
		}
	}
	metric.ExcludeNamed(out)
	return out
}
