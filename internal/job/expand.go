package job

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// expand makes one atomic job per combination of param values: the
// cartesian product of the list-valued params, the first param varying
// slowest (nested loops in file order).
func expand(tmpl *Job, params []param) []*Job {
	combos := [][]string{nil}
	for _, prm := range params {
		next := make([][]string, 0, len(combos)*len(prm.values))
		for _, c := range combos {
			for _, v := range prm.values {
				next = append(next, append(slices.Clone(c), v))
			}
		}
		combos = next
	}
	jobs := make([]*Job, len(combos))
	for i, c := range combos {
		vals := make(map[string]string, len(params))
		for k, prm := range params {
			vals[prm.name] = c[k]
		}
		jobs[i] = instantiate(tmpl, params, vals)
	}
	return jobs
}

// instantiate copies tmpl with the param values vals applied: the name gets
// "/name=value" per param in file order, "${name}" is replaced in the build
// and run commands (quoted for the shell: see substituteCommand) and in
// every environment value (as it is: no shell reads those), and each param
// is added to the build and run environments as PERFBOT_PARAM_<NAME>.
func instantiate(tmpl *Job, params []param, vals map[string]string) *Job {
	j := *tmpl
	var name strings.Builder
	name.WriteString(tmpl.Name)
	for _, prm := range params {
		name.WriteString("/" + prm.name + "=" + vals[prm.name])
	}
	j.Name = name.String()
	j.Params = vals

	j.Build.Command = substituteCommand(tmpl.Build.Command, vals)
	j.Build.Artifacts = slices.Clone(tmpl.Build.Artifacts)
	j.Build.Env = substituteEnv(tmpl.Build.Env, vals)
	j.Run.Command = substituteCommand(tmpl.Run.Command, vals)
	j.Run.Env = substituteEnv(tmpl.Run.Env, vals)
	j.Metrics = slices.Clone(tmpl.Metrics)
	j.Variants = make([]Variant, len(tmpl.Variants))
	for i, v := range tmpl.Variants {
		j.Variants[i] = Variant{Name: v.Name, Env: substituteEnv(v.Env, vals)}
	}
	for _, env := range []map[string]string{j.Build.Env, j.Run.Env} {
		for k, v := range vals {
			env[ParamEnv(k)] = v
		}
	}
	return &j
}

// ParamEnv returns the environment variable that carries param name.
func ParamEnv(name string) string {
	return ParamEnvPrefix + strings.ToUpper(name)
}

var paramRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// substitute replaces ${name} with the value of param name, as it is; it is
// for environment values. References to anything else are left as they are.
func substitute(s string, vals map[string]string) string {
	if len(vals) == 0 || !strings.Contains(s, "${") {
		return s
	}
	return paramRef.ReplaceAllStringFunc(s, func(ref string) string {
		if v, ok := vals[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
}

func substituteEnv(env map[string]string, vals map[string]string) map[string]string {
	out := maps.Clone(env)
	if out == nil {
		out = make(map[string]string)
	}
	for k, v := range out {
		out[k] = substitute(v, vals)
	}
	return out
}
