package job

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/perfbot/perfbot/internal/metric"
	"go.yaml.in/yaml/v3"
)

// The CI sections of a job file: which commits cannot matter (ignore:),
// what the pull-request gate decides (gate:) and how a runner is
// qualified (qualify:). None of them is part of the job key: changing a
// threshold keeps the stored runs.
//
//	ignore: [docs/**, "*.md", .github/**]
//	gate:
//	  threshold: 5            # percent, for every gated metric (default 5)
//	  metrics: {text_ms: 3, maxrss: 10}   # only these, each its own threshold
//	  alpha: 0.05             # false-positive rate of one gate, over all metrics and looks
//	  max_runs: 60            # runs of each revision, at most (default 60)
//	  max_time: 10m           # wall time of measuring and triage, at most (default 15m)
//	  alignment: pass         # an alignment artifact passes (default) or fails
//	  inconclusive: neutral   # exit 3 (default), or pass, or fail
//	  triage: true            # triage a regression within the budget (default true)
//	qualify:
//	  max_time: 20m           # default 20m
//	  slowdown: {variant: slow}         # a build variant that adds known work,
//	  # or: slowdown: {env: {EXTRA_WORK: "1000"}}  (run environment)

// Policy says what an outcome of the gate does to its exit status.
type Policy string

// The policies of gate.alignment and gate.inconclusive.
const (
	PolicyDefault Policy = ""        // the package's default for the outcome
	PolicyPass    Policy = "pass"    // exit 0
	PolicyFail    Policy = "fail"    // exit 1
	PolicyNeutral Policy = "neutral" // exit 3 (inconclusive only)
)

// Gate is the gate: section (perfbot gate). Zero fields mean the gate's
// defaults (package gate).
type Gate struct {
	// ThresholdPct is the smallest regression, in percent, that fails the
	// gate, for every gated metric without its own (0: the default).
	ThresholdPct float64
	// Metrics, when not empty, are the gated metrics and their own
	// thresholds in percent (0: ThresholdPct); the others are shown, not
	// gated. Empty: every metric of the job's own (not the builtins).
	Metrics []GateMetric
	// Alpha bounds the probability that a gate fails although nothing
	// changed, over all its metrics and looks (0: the default).
	Alpha float64
	// MaxRuns is the most runs of each revision (0: the default).
	MaxRuns int
	// MaxTime bounds the wall time of measuring and triage (0: the default).
	MaxTime time.Duration
	// Alignment is what an alignment artifact does: PolicyPass (default)
	// or PolicyFail.
	Alignment Policy
	// Inconclusive is what an undecided gate does: PolicyNeutral (exit 3,
	// the default), PolicyPass or PolicyFail.
	Inconclusive Policy
	// NoTriage, from "triage: false", skips the triage of a regression.
	NoTriage bool
}

// GateMetric is one gated metric and its threshold.
type GateMetric struct {
	Name         string
	ThresholdPct float64 // 0: Gate.ThresholdPct
}

// Qualify is the qualify: section (perfbot qualify).
type Qualify struct {
	// MaxTime bounds the qualification's wall time (0: the default).
	MaxTime time.Duration
	// Slowdown, when set, is a real planted slowdown to measure the
	// gate's power with.
	Slowdown *Slowdown
}

// Slowdown is a change that adds known work: a build variant of the job
// or an extra run environment (exactly one).
type Slowdown struct {
	Variant string
	Env     map[string]string
}

// Ignored reports whether the path (slash-separated, relative to the
// repository root) matches one of the job's ignore: globs. A glob matches
// as doublestar does (** spans directories); a glob without '/' matches
// the base name at any depth, as .gitignore's does ("*.md" ignores docs/a/b.md);
// a leading '/' anchors a glob at the root.
func (j *Job) Ignored(path string) bool {
	for _, g := range j.Ignore {
		if matchIgnore(g, path) {
			return true
		}
	}
	return false
}

func matchIgnore(glob, path string) bool {
	switch {
	case strings.HasPrefix(glob, "/"): // anchored at the root
		glob = glob[1:]
	case !strings.Contains(strings.TrimSuffix(glob, "/"), "/"):
		glob = "**/" + glob
	}
	if strings.HasSuffix(glob, "/") {
		glob += "**"
	}
	ok, _ := doublestar.Match(glob, path)
	return ok
}

var (
	gateFields     = []string{"threshold", "metrics", "alpha", "max_runs", "max_time", "alignment", "inconclusive", "triage"}
	qualifyFields  = []string{"max_time", "slowdown"}
	slowdownFields = []string{"variant", "env"}
)

func (p *parser) ignore(n *yaml.Node) []string {
	list, _ := p.strList(resolve(n), "ignore")
	for i, g := range list {
		if g == "" {
			continue
		}
		if !doublestar.ValidatePattern(strings.TrimPrefix(g, "/")) {
			p.errorf(resolve(n).Content[i], fmt.Sprintf("ignore[%d]", i), "invalid glob %q", g)
		}
	}
	return list
}

func (p *parser) gate(n *yaml.Node) Gate {
	var g Gate
	for _, f := range p.fields(n, "gate", gateFields) {
		field := join("gate", f.key)
		switch f.key {
		case "threshold":
			g.ThresholdPct, _ = p.percent(f.v, field)
		case "metrics":
			for _, m := range p.fields(f.v, field, nil) {
				mf := join(field, m.key)
				gm := GateMetric{Name: m.key}
				if v := resolve(m.v); !(v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
					gm.ThresholdPct, _ = p.percent(m.v, mf)
				}
				g.Metrics = append(g.Metrics, gm)
			}
		case "alpha":
			if a, ok := p.float(f.v, field); ok {
				if !(a > 0 && a < 0.5) {
					p.errorf(f.v, field, "want a level between 0 and 0.5, got %g", a)
				}
				g.Alpha = a
			}
		case "max_runs":
			if r, ok := p.int(f.v, field); ok {
				if r < MinRuns {
					p.errorf(f.v, field, "must be at least %d, got %d", MinRuns, r)
				}
				g.MaxRuns = r
			}
		case "max_time":
			g.MaxTime, _ = p.duration(f.v, field)
		case "alignment":
			g.Alignment = p.policy(f.v, field, PolicyPass, PolicyFail)
		case "inconclusive":
			g.Inconclusive = p.policy(f.v, field, PolicyNeutral, PolicyPass, PolicyFail)
		case "triage":
			var b bool
			if v := resolve(f.v); v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
				p.errorf(f.v, field, "expected true or false, got %s", describe(v))
				break
			}
			g.NoTriage = !b
		}
	}
	return g
}

func (p *parser) qualify(n *yaml.Node) Qualify {
	var q Qualify
	for _, f := range p.fields(n, "qualify", qualifyFields) {
		field := join("qualify", f.key)
		switch f.key {
		case "max_time":
			q.MaxTime, _ = p.duration(f.v, field)
		case "slowdown":
			s := &Slowdown{}
			pairs := p.fields(f.v, field, slowdownFields)
			for _, sf := range pairs {
				switch sf.key {
				case "variant":
					s.Variant, _ = p.nonEmpty(sf.v, join(field, "variant"))
				case "env":
					s.Env = p.env(sf.v, join(field, "env"))
				}
			}
			if (s.Variant == "") == (len(s.Env) == 0) {
				p.errorf(f.v, field, "want exactly one of variant: (a build variant that adds known work) or env: (a run environment that does)")
			}
			p.slowdownNode = f.v
			q.Slowdown = s
		}
	}
	return q
}

// checkCI checks what the CI sections name against the rest of the job:
// gated metrics the job reads and a slowdown variant it declares.
func (p *parser) checkCI(j *Job) {
	for i, m := range j.Gate.Metrics {
		if c, ok := metric.CanonicalBuiltin(m.Name); ok && !j.ownMetric(m.Name) {
			j.Gate.Metrics[i].Name = c // the name the runs are stored under
			continue
		}
		if !j.ownMetric(m.Name) && !metric.IsBuiltin(m.Name) {
			p.errorf(p.gateNode, "gate.metrics."+m.Name, "the job reads no metric %q (its metrics: %s)", m.Name, strings.Join(j.metricNames(), ", "))
		}
	}
	if s := j.Qualify.Slowdown; s != nil && s.Variant != "" {
		if _, ok := j.Variant(s.Variant); !ok {
			p.errorf(p.slowdownNode, "qualify.slowdown.variant", "the job declares no variant %q", s.Variant)
		}
	}
}

func (j *Job) metricNames() []string {
	var names []string
	for _, m := range j.Metrics {
		names = append(names, m.Name)
	}
	return names
}

// ownMetric reports whether the job reads a metric of that name itself.
func (j *Job) ownMetric(name string) bool {
	for _, m := range j.Metrics {
		if m.Name == name {
			return true
		}
	}
	return false
}

func (p *parser) policy(n *yaml.Node, field string, allowed ...Policy) Policy {
	s, ok := p.str(n, field)
	if !ok {
		return PolicyDefault
	}
	var names []string
	for _, a := range allowed {
		if string(a) == s {
			return a
		}
		names = append(names, string(a))
	}
	p.errorf(n, field, "want %s, got %q", strings.Join(names, ", "), s)
	return PolicyDefault
}

// percent reads a change in percent: 5, 2.5 or "5%".
func (p *parser) percent(n *yaml.Node, field string) (float64, bool) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && strings.HasSuffix(n.Value, "%") {
		c := *n
		c.Value, c.Tag = strings.TrimSpace(strings.TrimSuffix(n.Value, "%")), "!!float"
		n = &c
	}
	v, ok := p.float(n, field)
	if ok && !(v > 0 && v < 1000) {
		p.errorf(n, field, "want a change in percent above 0, got %g", v)
		return 0, false
	}
	return v, ok
}

func (p *parser) float(n *yaml.Node, field string) (float64, bool) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		if v, err := strconv.ParseFloat(n.Value, 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v, true
		}
	}
	p.errorf(n, field, "expected a number, got %s", describe(n))
	return 0, false
}
