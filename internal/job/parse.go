package job

import (
	"errors"
	"fmt"
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
	if tmpl != nil {
		p.paramRefs(p.buildCommand, "build.command", tmpl.Build.Command, params)
		if p.suite != nil {
			p.suiteParamRefs(p.suite, params)
		} else {
			p.paramRefs(p.runCommand, "run.command", tmpl.Run.Command, params)
		}
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
	jobs := expand(tmpl, params)
	if p.suite != nil {
		if p.applySuite(p.suite, jobs); len(p.errs) > 0 {
			return nil, p.sorted()
		}
	}
	for _, j := range jobs {
		metric.ExcludeNamed(j.Metrics)
		p.checkCI(j)
	}
	if len(p.errs) > 0 {
		return nil, p.sorted()
	}
	return jobs, nil
}

// parser collects the problems of one job file.
type parser struct {
	file     string
	errs     ErrorList
	repoNode *yaml.Node
	// The value nodes of build.command and run.command, for problems
	// found once the params are known.
	buildCommand, runCommand *yaml.Node
	// hasSuite is true when the file has a suite: key; suite is what it
	// says, when that is readable.
	hasSuite bool
	suite    *suiteRef
	// The gate: and qualify.slowdown nodes, for checks against the metrics
	// and variants (checkCI).
	gateNode, slowdownNode *yaml.Node
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
	topFields     = []string{"name", "repo", "build", "run", "suite", "runs", "warmup", "metrics", "variants", "params", "monitors", "ignore", "gate", "qualify"}
	buildFields   = []string{"command", "artifacts", "env", "timeout"}
	runFields     = []string{"command", "env", "timeout", "cpu"}
	metricFields  = []string{"name", "regex", "json", "gobench", "builtin", "format", "from", "unit", "better", "counter"}
	variantFields = []string{"env"}
	metricKinds   = []string{"regex", "json", "gobench", "builtin", "format"}
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
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := resolve(root.Content[i]); k.Kind == yaml.ScalarNode && k.Value == "suite" {
			p.hasSuite = true
		}
	}
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
		case "suite":
			p.suite = p.readSuite(f.v)
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
		case "monitors":
			j.Monitors = p.monitors(f.v)
		case "ignore":
			j.Ignore = p.ignore(f.v)
		case "gate":
			p.gateNode = f.v
			j.Gate = p.gate(f.v)
		case "qualify":
			j.Qualify = p.qualify(f.v)
		}
	}
	for _, req := range []struct {
		key, why string
		bySuite  bool // a suite supplies it
	}{
		{"repo", "the git repository to build, relative to the job file", false},
		{"build", "build.command builds one commit", false},
		{"run", "run.command runs the benchmark once, or suite: names a suite that does", true},
		{"metrics", "the figures to read from each run, or suite: names a suite that reads them", true},
	} {
		if !have[req.key] && !(req.bySuite && p.hasSuite) {
			p.errorf(root, req.key, "missing (%s)", req.why)
		}
	}
	if p.hasSuite && p.runCommand != nil {
		p.errorf(p.runCommand, "run.command", "the suite supplies the run command: leave it out (run.timeout, run.env and run.cpu stay the job's)")
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
			if s, ok := p.nonEmpty(f.v, field); ok && !p.hasNUL(f.v, field, s) {
				b.Command, p.buildCommand = s, f.v
			}
		case "artifacts":
			list, _ := p.strList(f.v, field)
			seen := make(map[string]string) // clean path -> as first written
			for i, a := range list {
				at, af := resolve(f.v.Content[i]), fmt.Sprintf("%s[%d]", field, i)
				switch clean := filepath.Clean(a); {
				case a == "":
				case !filepath.IsLocal(a):
					p.errorf(at, af, "%q must be a path inside the worktree", a)
				case clean == ".":
					p.errorf(at, af, "%q is the whole worktree; list the files whose layout matters", a)
				case seen[clean] != "":
					p.errorf(at, af, "%q is listed twice (as %q before)", a, seen[clean])
				default:
					seen[clean] = a
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
			if s, ok := p.nonEmpty(f.v, field); ok && !p.hasNUL(f.v, field, s) {
				r.Command, p.runCommand = s, f.v
			}
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
	if !haveCommand && !p.hasSuite && resolve(n).Kind == yaml.MappingNode {
		p.errorf(n, "run.command", "missing (the shell command that runs the benchmark once)")
	}
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
		pairs := p.fields(f.v, field, variantFields)
		for _, vf := range pairs {
			v.Env = p.env(vf.v, join(field, vf.key))
		}
		if vn := resolve(f.v); vn.Kind == yaml.MappingNode && len(vn.Content) == 0 {
			// {} would build exactly what the plain build builds.
			p.errorf(f.v, field, "missing env: (the variant's extra build environment)")
			continue
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
			if s, ok := p.str(f.v, field); ok && !p.hasNUL(f.v, field, s) {
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
				if !ok || p.hasNUL(e, ef, s) {
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
