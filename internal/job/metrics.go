package job

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/perfbot/perfbot/internal/metric"
)

func (p *parser) metrics(n *yaml.Node) []metric.Spec {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "metrics", "expected a list of metrics, got %s", describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		p.errorf(n, "metrics", "at least one metric is required (builtin: wall times the whole run)")
		return nil
	}
	var specs []metric.Spec
	names := make(map[string]int) // name -> line of first use
	for i, mn := range n.Content {
		s, ok := p.metric(resolve(mn), fmt.Sprintf("metrics[%d]", i))
		if !ok {
			continue
		}
		if name := s.Name; name != "" && s.Kind != metric.KindGoBench {
			if line, dup := names[name]; dup {
				p.errorf(mn, fmt.Sprintf("metrics[%d].name", i), "metric %q is already defined on line %d", name, line)
				continue
			}
			names[name] = resolve(mn).Line
		}
		specs = append(specs, s)
	}
	return specs
}

// metric reads one metric. It reports every problem of the metric, not only
// the first: those of each field as read (a better that is neither lower
// nor higher), then those metric.Spec.Problems finds in the rest (a regex
// that does not compile), leaving out fields already reported.
func (p *parser) metric(n *yaml.Node, field string) (metric.Spec, bool) {
	var s metric.Spec
	nodes := make(map[string]*yaml.Node) // field -> value node
	pairs := p.fields(n, field, metricFields)
	if n.Kind != yaml.MappingNode {
		return s, false
	}
	ok := true
	bad := make(map[string]bool) // fields whose problem is reported
	var kinds []string
	for _, f := range pairs {
		nodes[f.key] = f.v
		name := join(field, f.key)
		if slices.Contains(metricKinds, f.key) {
			kinds = append(kinds, f.key)
			if len(kinds) > 1 {
				p.errorf(f.k, name, "a metric has exactly one of regex, json, gobench, builtin or format; this one also has %s", kinds[0])
				ok = false
				continue
			}
		}
		var fok bool
		switch f.key {
		case "name":
			s.Name, fok = p.nonEmpty(f.v, name)
		case "regex":
			s.Kind = metric.KindRegex
			s.Pattern, fok = p.nonEmpty(f.v, name)
		case "json":
			s.Kind = metric.KindJSON
			s.Path, fok = p.nonEmpty(f.v, name)
		case "format":
			s.Kind = metric.KindFormat
			s.Format, fok = p.nonEmpty(f.v, name)
		case "builtin":
			s.Kind = metric.KindBuiltin
			var b string
			if b, fok = p.nonEmpty(f.v, name); fok {
				if canon, known := metric.CanonicalBuiltin(b); known {
					b = canon
				}
				s.Builtin = b
			}
		case "gobench":
			s.Kind = metric.KindGoBench
			fok = f.v.Kind == yaml.ScalarNode && f.v.Tag != "!!null" && f.v.Value != "" && !(f.v.Tag == "!!bool" && f.v.Value != "true")
			if !fok {
				p.errorf(f.v, name, "want true or a metric name prefix, got %s", describe(f.v))
			} else if f.v.Tag != "!!bool" {
				if slices.ContainsFunc(pairs, func(q pair) bool { return q.key == "name" }) {
					p.errorf(f.v, name, "give the name prefix either here or in name:, not both")
					fok = false
				}
				s.Name = f.v.Value
			}
		case "counter":
			var c string
			if c, fok = p.nonEmpty(f.v, name); fok {
				s.Counter = metric.Counter(c) // checked by s.Problems
			}
		case "from":
			s.From, fok = p.nonEmpty(f.v, name)
		case "unit":
			s.Unit, fok = p.nonEmpty(f.v, name)
		case "better":
			var b string
			if b, fok = p.str(f.v, name); fok {
				switch b {
				case "lower":
					s.Better = metric.LowerIsBetter
				case "higher":
					s.Better = metric.HigherIsBetter
				default:
					p.errorf(f.v, name, "want lower or higher, got %q", b)
					fok = false
				}
			}
		}
		if !fok {
			bad[f.key] = true
			ok = false
		}
	}
	if len(kinds) == 0 {
		p.errorf(n, field, "a metric needs one of regex, json, gobench, builtin or format")
		return s, false
	}
	if nodes["better"] == nil && (s.Kind == metric.KindRegex || s.Kind == metric.KindJSON) {
		p.errorf(nodes[kinds[0]], join(field, "better"), "required for %s metrics: lower or higher", kinds[0])
		ok = false
	}
	if s.IsInstructions() {
		// Stored, compared and gated as "instructions" unless named.
		s.Name = s.InstructionsName()
		if s.Counter == "" {
			s.Counter = metric.CounterAuto
		}
	}
	for _, se := range s.Problems() {
		sub := se.Field
		if sub == "kind" {
			sub = kinds[0]
		}
		if bad[sub] {
			continue // a value that could not be read: already reported
		}
		at := nodes[se.Field]
		if at == nil {
			at = nodes[kinds[0]]
		}
		p.errorf(at, join(field, sub), "%s", se.Msg)
		ok = false
	}
	return s, ok
}
