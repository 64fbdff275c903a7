package job

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Params in shell commands. build.command and run.command run with sh -c,
// so a param value spliced into them as it is would be read by the shell:
// "1; touch x" would run touch. substituteCommand therefore quotes each
// value for the place its ${name} stands in:
//
//   - unquoted: a value made only of [A-Za-z0-9_@%+=:,./-] (or empty) is
//     spliced as it is; any other is single-quoted, each ' written '\''.
//   - inside "...": a value is spliced as it is, with a backslash before
//     each $, `, " and \.
//   - inside '...': a value is spliced as it is, each ' written '\''.
//
// Values that need no quoting where they stand are spliced exactly as
// before quoting existed, so those commands, and with them the job keys of
// the runs already stored, do not change.
//
// scanRefs follows the shell's quoting only this far. After a backquote,
// $(, ${ (other than a plain ${NAME}), $' or <<, and for a ${name} that
// follows a backslash or a $, it does not say how the value would be read;
// there a value that needs quoting is an error (the job file is to use
// $PERFBOT_PARAM_<NAME> there), and one that does not is spliced as it is.

// quoting is where a ${name} stands in a shell command.
type quoting int

const (
	unquoted quoting = iota
	inDouble         // inside "..."
	inSingle         // inside '...'
	opaque           // somewhere scanRefs does not follow; see shellRef.why
)

// A shellRef is one ${NAME} in a shell command, param or not.
type shellRef struct {
	start, end int // cmd[start:end] is "${NAME}"
	name       string
	ctx        quoting
	why        string // for opaque: what it stands after, e.g. "a backquote"
}

// refAt returns the name of the ${NAME} at cmd[i:] and the index just past
// it, or "", -1.
func refAt(cmd string, i int) (string, int) {
	if !strings.HasPrefix(cmd[i:], "${") {
		return "", -1
	}
	j := i + 2
	for j < len(cmd) && (cmd[j] == '_' || 'a' <= cmd[j] && cmd[j] <= 'z' || 'A' <= cmd[j] && cmd[j] <= 'Z' || j > i+2 && '0' <= cmd[j] && cmd[j] <= '9') {
		j++
	}
	if j == i+2 || j == len(cmd) || cmd[j] != '}' {
		return "", -1
	}
	return cmd[i+2 : j], j + 1
}

// scanRefs returns the ${NAME} references in cmd, in order, each with the
// quoting it stands in. It finds the same references as the paramRef
// regexp (leftmost first, not overlapping).
func scanRefs(cmd string) []shellRef {
	var refs []shellRef
	ctx := unquoted
	why := ""         // once set, the rest of cmd is opaque
	escaped := false  // the byte before was quoted by a backslash
	dollar := false   // the byte before was a $ that starts an expansion
	wordStart := true // unquoted: the next byte starts a word
	comment := false  // unquoted: in a # comment, up to the newline
	for i := 0; i < len(cmd); {
		if name, end := refAt(cmd, i); end > 0 {
			r := shellRef{start: i, end: end, name: name, ctx: ctx}
			switch {
			case comment:
				r.ctx = unquoted // quoting in a comment does no harm
			case why != "":
				r.ctx, r.why = opaque, why
			case ctx == inSingle:
			case escaped:
				r.ctx, r.why = opaque, "a backslash"
			case dollar:
				r.ctx, r.why = opaque, `"$"`
			}
			refs = append(refs, r)
			i = end
			escaped, dollar, wordStart = false, false, false
			continue
		}
		c := cmd[i]
		i++
		switch {
		case why != "":
			continue
		case comment:
			if c == '\n' {
				comment, wordStart = false, true
			}
			continue
		case escaped:
			escaped, dollar, wordStart = false, false, false
			continue
		}
		afterDollar := dollar
		dollar = false
		switch ctx {
		case inSingle:
			if c == '\'' {
				ctx = unquoted
			}
			continue
		case inDouble:
			switch c {
			case '"':
				ctx = unquoted
			case '\\':
				escaped = i < len(cmd) && strings.IndexByte("$`\"\\\n", cmd[i]) >= 0
			case '`':
				why = "a backquote"
			case '$':
				why = dollarWhy(cmd, i)
				dollar = why == "" && !afterDollar // $$ is the shell's PID
			}
			continue
		}
		switch c {
		case '\\':
			escaped, wordStart = true, false
		case '\'':
			ctx, wordStart = inSingle, false
		case '"':
			ctx, wordStart = inDouble, false
		case '`':
			why = "a backquote"
		case '$':
			why = dollarWhy(cmd, i)
			dollar = why == "" && !afterDollar
			wordStart = false
		case '#':
			comment = wordStart
		case '<':
			if i < len(cmd) && cmd[i] == '<' {
				why = `"<<"`
			}
			wordStart = true
		case ' ', '\t', '\n', ';', '&', '|', '(', ')', '>':
			wordStart = true
		default:
			wordStart = false
		}
	}
	return refs
}

// dollarWhy says which construct the $ before cmd[i] starts, when it is
// one scanRefs does not follow, else "".
func dollarWhy(cmd string, i int) string {
	if i < len(cmd) {
		switch cmd[i] {
		case '(':
			return `"$("`
		case '{': // not a plain ${NAME}: refAt saw it first
			return `"${"`
		case '\'':
			return `"$'"`
		}
	}
	return ""
}

// shellSafe reports whether v may stand unquoted in a shell command as it
// is: it holds only bytes the shell gives no meaning to.
func shellSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_@%+=:,./-", c) >= 0) {
			return false
		}
	}
	return true
}

// quoteParam returns what stands for value v at a reference quoted as ctx,
// and whether the shell reads it as exactly v. It is false only for an
// opaque reference to a value that is not shellSafe; the text returned then
// is v single-quoted, right in most places but not all.
func quoteParam(ctx quoting, v string) (string, bool) {
	switch ctx {
	case inSingle:
		return strings.ReplaceAll(v, "'", `'\''`), true
	case inDouble:
		if !strings.ContainsAny(v, "$`\"\\") {
			return v, true
		}
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			if strings.IndexByte("$`\"\\", v[i]) >= 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(v[i])
		}
		return b.String(), true
	}
	if shellSafe(v) {
		return v, true
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'", ctx == unquoted
}

// ShellQuote quotes s to stand as one word in a sh command line: as it is
// when it needs no quoting, else single-quoted.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	q, _ := quoteParam(unquoted, s)
	return q
}

// substituteCommand replaces each ${name} of a param in the shell command
// cmd with the param's value, quoted by quoteParam. Other ${NAME} are left
// for the shell.
func substituteCommand(cmd string, vals map[string]string) string {
	if len(vals) == 0 || !strings.Contains(cmd, "${") {
		return cmd
	}
	var b strings.Builder
	last := 0
	for _, r := range scanRefs(cmd) {
		v, ok := vals[r.name]
		if !ok {
			continue
		}
		q, _ := quoteParam(r.ctx, v)
		b.WriteString(cmd[last:r.start])
		b.WriteString(q)
		last = r.end
	}
	b.WriteString(cmd[last:])
	return b.String()
}

// paramRefs reports each ${name} in a shell command that cannot be
// quoted for one of the param's values (see quoteParam), once per param.
func (p *parser) paramRefs(n *yaml.Node, field, cmd string, params []param) {
	if n == nil || cmd == "" {
		return
	}
	values := make(map[string][]string, len(params))
	for _, prm := range params {
		values[prm.name] = prm.values
	}
	reported := make(map[string]bool)
	for _, r := range scanRefs(cmd) {
		vals, isParam := values[r.name]
		if !isParam || reported[r.name] {
			continue
		}
		for _, v := range vals {
			if _, exact := quoteParam(r.ctx, v); !exact {
				p.errorf(n, field, "${%s} stands after %s, where perfbot cannot quote its value %q for the shell; use %s there instead (see docs/jobs.md)",
					r.name, r.why, v, "$"+ParamEnv(r.name))
				reported[r.name] = true
				break
			}
		}
	}
}

// hasNUL reports a string that cannot go into a command line or an
// environment: one with a NUL byte.
func (p *parser) hasNUL(n *yaml.Node, field, s string) bool {
	if strings.IndexByte(s, 0) < 0 {
		return false
	}
	p.errorf(n, field, "%q holds a NUL byte, which no command or environment can carry", s)
	return true
}
