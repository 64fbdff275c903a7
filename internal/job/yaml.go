package job

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Reading YAML nodes: each reader reports what is wrong with a node at its
// line and field, and says whether it got a value.

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
		if f.key == "PERFBOT_COMMIT" || f.key == "PERFBOT_VARIANT" {
			p.errorf(f.k, name, "perfbot sets %s for every build and run", f.key)
			continue
		}
		if v, ok := p.str(f.v, name); ok && !p.hasNUL(f.v, name, v) {
			env[f.key] = v
		}
	}
	return env
}
