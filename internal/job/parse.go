package job

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/perfbot/perfbot/internal/metric"
)

// Defaults and limits of job files.
const (
	DefaultRuns         = 6
	MinRuns             = 3
	DefaultBuildTimeout = 30 * time.Minute
	DefaultRunTimeout   = 10 * time.Minute
	// MaxMatrix is the most atomic jobs one job file may expand to.
	MaxMatrix = 1000
)

// ParamEnvPrefix starts the names of the environment variables that carry
// params (PERFBOT_PARAM_SIZE for param "size"); job files may not set such
// variables themselves.
const ParamEnvPrefix = "PERFBOT_PARAM_"

// Load reads the job file at path, checks it, checks that its repository is
// a directory, and returns its atomic jobs (one per combination of the
// params matrix, in file order). A malformed file returns an ErrorList with
// every problem found and no jobs.
func Load(path string) ([]*Job, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parse(path, data, true)
}

// Parse is Load on data already read, for a file named file (which sets the
// default job name and the directory "repo" is relative to). Unlike Load it
// does not check that the repository exists, so tests can parse job files
// without one.
func Parse(file string, data []byte) ([]*Job, error) {
	return parse(file, data, false)
}

func parse(file string, data []byte, checkRepo bool) ([]*Job, error) {
	p := &parser{file: file}
	root := p.decode(data)
	var (
		tmpl   *Job
		params []param
	)
	if root != nil {
		tmpl, params = p.job(root)
	}
	if len(p.errs) > 0 {
		return nil, p.sorted()
	}
	if checkRepo {
		switch st, err := os.Stat(tmpl.Repo); {
		case errors.Is(err, os.ErrNotExist):
			p.errorf(p.repoNode, "repo", "%s does not exist", tmpl.Repo)
		case err != nil:
			p.errorf(p.repoNode, "repo", "%v", err)
		case !st.IsDir():
			p.errorf(p.repoNode, "repo", "%s is not a directory", tmpl.Repo)
		}
		if len(p.errs) > 0 {
			return nil, p.sorted()
		}
	}
	return expand(tmpl, params), nil
}

// parser collects the problems of one job file.
type parser struct {
	file     string
	errs     ErrorList
	repoNode *yaml.Node
}

func (p *parser) errorf(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, &SyntaxError{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) sorted() ErrorList {
	slices.SortStableFunc(p.errs, func(a, b *SyntaxError) int { return a.Line - b.Line })
	return p.errs
}

var yamlLineErr = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// decode parses data as one YAML document and returns its root node, or nil
// after reporting why it cannot.
func (p *parser) decode(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			p.errorf(nil, "", "empty job file")
			return nil
		}
		p.yamlError(err)
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); err {
	case io.EOF:
	case nil:
		p.errorf(&next, "", "a job file holds one YAML document; another starts here")
		return nil
	default:
		p.yamlError(err)
		return nil
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			p.errorf(nil, "", "empty job file")
			return nil
		}
		root = root.Content[0]
	}
	root = resolve(root)
	if root.Kind != yaml.MappingNode {
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			p.errorf(nil, "", "empty job file")
			return nil
		}
		p.errorf(root, "", "a job file is a mapping of fields (repo, build, run, metrics, ...), not %s", describe(root))
		return nil
	}
	return root
}

func (p *parser) yamlError(err error) {
	msg := err.Error()
	if m := yamlLineErr.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		p.errs = append(p.errs, &SyntaxError{File: p.file, Line: line, Msg: "invalid YAML: " + m[2]})
		return
	}
	p.errs = append(p.errs, &SyntaxError{File: p.file, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")})
}

// resolve follows YAML aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// describe names what n is, for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	}
	return "a YAML node of kind " + strconv.Itoa(int(n.Kind))
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

type pair struct {
	key  string
	k, v *yaml.Node
}

// fields returns the entries of the mapping n, reporting a node that is not a
// mapping, duplicate keys, and (when known is not nil) unknown keys.
func (p *parser) fields(n *yaml.Node, field string, known []string) []pair {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		p.errorf(n, field, "expected a mapping, got %s", describe(n))
		return nil
	}
	seen := make(map[string]bool)
	var pairs []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Tag == "!!null" {
			p.errorf(k, field, "a key must be a plain string, not %s", describe(k))
			continue
		}
		key := k.Value
		if known != nil && !slices.Contains(known, key) {
			msg := fmt.Sprintf("unknown field %q", key)
			if s := suggestion(key, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			p.errorf(k, field, "%s", msg)
			continue
		}
		if seen[key] {
			p.errorf(k, join(field, key), "given twice")
			continue
		}
		seen[key] = true
		pairs = append(pairs, pair{key, k, v})
	}
	return pairs
}

// str reads a scalar as a string: numbers and booleans are taken as written.
func (p *parser) str(n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, field, "expected a string, got %s", describe(n))
		return "", false
	}
	if n.Tag == "!!null" {
		p.errorf(n, field, "missing value")
		return "", false
	}
	return n.Value, true
}

// nonEmpty reads a string that may not be empty.
func (p *parser) nonEmpty(n *yaml.Node, field string) (string, bool) {
	s, ok := p.str(n, field)
	if ok && strings.TrimSpace(s) == "" {
		p.errorf(n, field, "must not be empty")
		return "", false
	}
	return s, ok
}

func (p *parser) int(n *yaml.Node, field string) (int, bool) {
	var i int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		p.errorf(n, field, "expected an integer, got %s", describe(n))
		return 0, false
	}
	return i, true
}

func (p *parser) duration(n *yaml.Node, field string) (time.Duration, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errorf(n, field, "expected a duration like 60s or 10m, got %s", describe(n))
		return 0, false
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		hint := ""
		if _, err := strconv.ParseFloat(n.Value, 64); err == nil {
			hint = " (a duration needs a unit: " + n.Value + "s)"
		}
		p.errorf(n, field, "invalid duration %q%s", n.Value, hint)
		return 0, false
	}
	if d <= 0 {
		p.errorf(n, field, "must be positive, got %v", d)
		return 0, false
	}
	return d, true
}

func (p *parser) strList(n *yaml.Node, field string) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, field, "expected a list, got %s", describe(n))
		return nil, false
	}
	list := []string{}
	ok := true
	for i, e := range n.Content {
		s, eok := p.nonEmpty(resolve(e), fmt.Sprintf("%s[%d]", field, i))
		ok = ok && eok
		list = append(list, s)
	}
	return list, ok
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// env reads a mapping of environment variables.
func (p *parser) env(n *yaml.Node, field string) map[string]string {
	env := make(map[string]string)
	for _, f := range p.fields(n, field, nil) {
		name := join(field, f.key)
		if !envName.MatchString(f.key) {
			p.errorf(f.k, name, "invalid environment variable name")
			continue
		}
		if strings.HasPrefix(f.key, ParamEnvPrefix) {
			p.errorf(f.k, name, "the %s* variables are set from params", ParamEnvPrefix)
			continue
		}
		if v, ok := p.str(f.v, name); ok {
			env[f.key] = v
		}
	}
	return env
}

// param is one entry of "params:": a list value is a matrix axis.
type param struct {
	name   string
	values []string
}

var (
	paramName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	variantName = regexp.MustCompile(`^[a-z0-9_.-]+$`)
)

var (
	topFields     = []string{"name", "repo", "build", "run", "runs", "warmup", "metrics", "variants", "params"}
	buildFields   = []string{"command", "artifacts", "env", "timeout"}
	runFields     = []string{"command", "env", "timeout", "cpu"}
	metricFields  = []string{"name", "regex", "json", "gobench", "builtin", "from", "unit", "better"}
	variantFields = []string{"env"}
	metricKinds   = []string{"regex", "json", "gobench", "builtin"}
)

// job reads the whole file into a template job (params not yet applied) and
// the params.
func (p *parser) job(root *yaml.Node) (*Job, []param) {
	abs, err := filepath.Abs(p.file)
	if err != nil {
		p.errorf(nil, "", "%v", err)
		return nil, nil
	}
	j := &Job{
		File:   abs,
		Name:   strings.TrimSuffix(filepath.Base(p.file), filepath.Ext(p.file)),
		Build:  Build{Env: map[string]string{}, Timeout: DefaultBuildTimeout},
		Run:    Run{Env: map[string]string{}, Timeout: DefaultRunTimeout, CPU: "auto"},
		Runs:   DefaultRuns,
		Params: map[string]string{},
	}
	var params []param
	have := make(map[string]bool)
	for _, f := range p.fields(root, "", topFields) {
		have[f.key] = true
		switch f.key {
		case "name":
			if s, ok := p.nonEmpty(f.v, "name"); ok {
				if strings.ContainsFunc(s, unicode.IsSpace) || strings.Contains(s, "/") {
					p.errorf(f.v, "name", "%q may not contain white space or '/'", s)
				}
				j.Name = s
			}
		case "repo":
			p.repoNode = f.v
			if s, ok := p.nonEmpty(f.v, "repo"); ok {
				if !filepath.IsAbs(s) {
					s = filepath.Join(filepath.Dir(abs), s)
				}
				j.Repo = filepath.Clean(s)
			}
		case "build":
			p.build(f.v, &j.Build)
		case "run":
			p.run(f.v, &j.Run)
		case "runs":
			if n, ok := p.int(f.v, "runs"); ok {
				if n < MinRuns {
					p.errorf(f.v, "runs", "must be at least %d, got %d (fewer runs cannot show a change)", MinRuns, n)
				}
				j.Runs = n
			}
		case "warmup":
			if n, ok := p.int(f.v, "warmup"); ok {
				if n < 0 {
					p.errorf(f.v, "warmup", "must not be negative, got %d", n)
				}
				j.Warmup = n
			}
		case "metrics":
			j.Metrics = p.metrics(f.v)
		case "variants":
			j.Variants = p.variants(f.v)
		case "params":
			params = p.params(f.v)
		}
	}
	for _, req := range []struct{ key, why string }{
		{"repo", "the git repository to build, relative to the job file"},
		{"build", "build.command builds one commit"},
		{"run", "run.command runs the benchmark once"},
		{"metrics", "the figures to read from each run"},
	} {
		if !have[req.key] {
			p.errorf(root, req.key, "missing (%s)", req.why)
		}
	}
	return j, params
}

func (p *parser) build(n *yaml.Node, b *Build) {
	var haveCommand bool
	for _, f := range p.fields(n, "build", buildFields) {
		field := join("build", f.key)
		switch f.key {
		case "command":
			haveCommand = true
			b.Command, _ = p.nonEmpty(f.v, field)
		case "artifacts":
			list, _ := p.strList(f.v, field)
			for i, a := range list {
				if a != "" && !filepath.IsLocal(a) {
					p.errorf(resolve(f.v.Content[i]), fmt.Sprintf("%s[%d]", field, i), "%q must be a path inside the worktree", a)
				}
			}
			b.Artifacts = list
		case "env":
			b.Env = p.env(f.v, field)
		case "timeout":
			if d, ok := p.duration(f.v, field); ok {
				b.Timeout = d
			}
		}
	}
	if !haveCommand && resolve(n).Kind == yaml.MappingNode {
		p.errorf(n, "build.command", "missing (the shell command that builds one commit)")
	}
}

func (p *parser) run(n *yaml.Node, r *Run) {
	var haveCommand bool
	for _, f := range p.fields(n, "run", runFields) {
		field := join("run", f.key)
		switch f.key {
		case "command":
			haveCommand = true
			r.Command, _ = p.nonEmpty(f.v, field)
		case "env":
			r.Env = p.env(f.v, field)
		case "timeout":
			if d, ok := p.duration(f.v, field); ok {
				r.Timeout = d
			}
		case "cpu":
			s, ok := p.str(f.v, field)
			if !ok {
				break
			}
			if s != "auto" && s != "none" {
				if n, err := strconv.Atoi(s); err != nil || n < 0 || strconv.Itoa(n) != s {
					p.errorf(f.v, field, "want auto, none or a CPU number, got %q", s)
					break
				}
			}
			r.CPU = s
		}
	}
	if !haveCommand && resolve(n).Kind == yaml.MappingNode {
		p.errorf(n, "run.command", "missing (the shell command that runs the benchmark once)")
	}
}

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

func (p *parser) metric(n *yaml.Node, field string) (metric.Spec, bool) {
	var s metric.Spec
	nodes := make(map[string]*yaml.Node) // field -> value node
	pairs := p.fields(n, field, metricFields)
	if n.Kind != yaml.MappingNode {
		return s, false
	}
	ok := true
	var kinds []string
	for _, f := range pairs {
		nodes[f.key] = f.v
		name := join(field, f.key)
		if slices.Contains(metricKinds, f.key) {
			kinds = append(kinds, f.key)
			if len(kinds) > 1 {
				p.errorf(f.k, name, "a metric has exactly one of regex, json, gobench or builtin; this one also has %s", kinds[0])
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
		ok = ok && fok
	}
	if len(kinds) == 0 {
		p.errorf(n, field, "a metric needs one of regex, json, gobench or builtin")
		return s, false
	}
	if !ok {
		return s, false
	}
	if s.Better == 0 && (s.Kind == metric.KindRegex || s.Kind == metric.KindJSON) {
		p.errorf(nodes[kinds[0]], join(field, "better"), "required for %s metrics: lower or higher", kinds[0])
		return s, false
	}
	if err := s.Validate(); err != nil {
		var se *metric.SpecError
		if !errors.As(err, &se) {
			p.errorf(n, field, "%v", err)
			return s, false
		}
		at := nodes[se.Field]
		if at == nil {
			at = nodes[kinds[0]]
		}
		sub := se.Field
		if sub == "kind" {
			sub = kinds[0]
		}
		p.errorf(at, join(field, sub), "%s", se.Msg)
		return s, false
	}
	return s, true
}

func (p *parser) variants(n *yaml.Node) []Variant {
	var vs []Variant
	for _, f := range p.fields(n, "variants", nil) {
		field := join("variants", f.key)
		if !variantName.MatchString(f.key) {
			p.errorf(f.k, field, "a variant name is made of a-z, 0-9, '_', '.' and '-'")
			continue
		}
		v := Variant{Name: f.key, Env: map[string]string{}}
		if f.v.Kind == yaml.ScalarNode && f.v.Tag == "!!null" {
			p.errorf(f.v, field, "missing env: (the variant's extra build environment)")
			continue
		}
		for _, vf := range p.fields(f.v, field, variantFields) {
			v.Env = p.env(vf.v, join(field, vf.key))
		}
		vs = append(vs, v)
	}
	return vs
}

func (p *parser) params(n *yaml.Node) []param {
	var params []param
	envNames := make(map[string]string) // PERFBOT_PARAM_X -> param
	for _, f := range p.fields(n, "params", nil) {
		field := join("params", f.key)
		if !paramName.MatchString(f.key) {
			p.errorf(f.k, field, "a param name is a letter or '_' followed by letters, digits or '_'")
			continue
		}
		env := ParamEnvPrefix + strings.ToUpper(f.key)
		if other, dup := envNames[env]; dup {
			p.errorf(f.k, field, "same environment variable %s as param %q", env, other)
			continue
		}
		envNames[env] = f.key
		prm := param{name: f.key}
		switch f.v.Kind {
		case yaml.ScalarNode:
			if s, ok := p.str(f.v, field); ok {
				prm.values = []string{s}
			}
		case yaml.SequenceNode:
			if len(f.v.Content) == 0 {
				p.errorf(f.v, field, "an empty list gives no jobs")
				continue
			}
			seen := make(map[string]bool)
			for i, e := range f.v.Content {
				e = resolve(e)
				ef := fmt.Sprintf("%s[%d]", field, i)
				if e.Kind != yaml.ScalarNode {
					p.errorf(e, ef, "expected a value, got %s", describe(e))
					continue
				}
				s, ok := p.str(e, ef)
				if !ok {
					continue
				}
				if seen[s] {
					p.errorf(e, ef, "value %q is listed twice", s)
					continue
				}
				seen[s] = true
				prm.values = append(prm.values, s)
			}
		default:
			p.errorf(f.v, field, "expected a value or a list of values, got %s", describe(f.v))
			continue
		}
		if len(prm.values) > 0 {
			params = append(params, prm)
		}
	}
	total := 1
	for _, prm := range params {
		total *= len(prm.values)
		if total > MaxMatrix {
			p.errorf(n, "params", "the matrix expands to more than %d jobs", MaxMatrix)
			break
		}
	}
	return params
}
