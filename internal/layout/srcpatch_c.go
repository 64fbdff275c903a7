// A small C scanner for source patches: where a top-level statement (a
// definition) ends and starts, so that a padding definition can be put
// just after or just before the one that declares a symbol.

package layout

import (
	"regexp"
	"strings"
)

// cBound is a place where a statement ends (or a block opens, or a
// preprocessor line stands): the statement after it starts on the next
// line.
type cBound struct {
	line  int // 0-based line of the character that ends it
	depth int // bracket depth of the statements it separates
	body  bool
}

// cFile is a C (or C++) source file split into lines, with the bracket
// depth at the start of each line and the statement boundaries.
type cFile struct {
	lines        []string
	finalNewline bool
	depth        []int  // bracket depth ((, [, {) at the start of each line
	comment      []bool // the line starts inside a /* comment */
	bounds       []cBound
}

// scanC splits src into lines and finds its statement boundaries. It
// knows comments, string and character literals and preprocessor lines;
// it does not expand macros.
func scanC(src []byte) *cFile {
	text := string(src)
	f := &cFile{finalNewline: strings.HasSuffix(text, "\n")}
	f.lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		f.lines = nil
	}
	f.depth = make([]int, len(f.lines))
	f.comment = make([]bool, len(f.lines))
	depth, line := 0, 0
	inBlockComment := false
	// openBody[d] is true when the { that opened depth d+1 follows a ')':
	// a function (or statement) body, whose } ends a statement.
	var openBody []bool
	lastSig := byte(0) // last significant character
	for line < len(f.lines) {
		l := f.lines[line]
		f.depth[line] = depth
		f.comment[line] = inBlockComment
		i := 0
		if !inBlockComment {
			if t := strings.TrimLeft(l, " \t"); strings.HasPrefix(t, "#") {
				// A preprocessor line, with its continuations.
				for strings.HasSuffix(f.lines[line], "\\") && line+1 < len(f.lines) {
					line++
					f.depth[line] = depth
				}
				f.bounds = append(f.bounds, cBound{line: line, depth: depth})
				line++
				continue
			}
		}
		for i < len(l) {
			c := l[i]
			if inBlockComment {
				if c == '*' && i+1 < len(l) && l[i+1] == '/' {
					inBlockComment = false
					i += 2
					continue
				}
				i++
				continue
			}
			switch {
			case c == '/' && i+1 < len(l) && l[i+1] == '/':
				i = len(l)
				continue
			case c == '/' && i+1 < len(l) && l[i+1] == '*':
				inBlockComment = true
				i += 2
				continue
			case c == '"' || c == '\'':
				j := i + 1
				for j < len(l) && l[j] != c {
					if l[j] == '\\' {
						j++
					}
					j++
				}
				i = j + 1
				lastSig = c
				continue
			case c == '(' || c == '[':
				depth++
			case c == ')' || c == ']':
				if depth > 0 {
					depth--
				}
			case c == '{':
				openBody = append(openBody, lastSig == ')')
				depth++
				f.bounds = append(f.bounds, cBound{line: line, depth: depth})
			case c == '}':
				if depth > 0 {
					depth--
				}
				body := false
				if n := len(openBody); n > 0 {
					body = openBody[n-1]
					openBody = openBody[:n-1]
				}
				if body {
					f.bounds = append(f.bounds, cBound{line: line, depth: depth, body: true})
				}
			case c == ';':
				f.bounds = append(f.bounds, cBound{line: line, depth: depth})
			}
			if c != ' ' && c != '\t' {
				lastSig = c
			}
			i++
		}
		line++
	}
	return f
}

// stmtEnd returns the 0-based line where the statement holding line l
// (0-based) ends: the first boundary at l's depth on or after l. ok is
// false when there is none.
func (f *cFile) stmtEnd(l int) (end int, body, ok bool) {
	d := f.depth[l]
	for _, b := range f.bounds {
		if b.line >= l && b.depth == d {
			return b.line, b.body, true
		}
	}
	return 0, false, false
}

// stmtStart returns the 0-based line where the statement holding line l
// starts: the first non-blank line after the last boundary at l's depth
// before l (so a comment just above the statement counts as part of it).
func (f *cFile) stmtStart(l int) int {
	d := f.depth[l]
	start := 0
	for _, b := range f.bounds {
		if b.line >= l {
			break
		}
		if b.depth == d {
			start = b.line + 1
		}
	}
	for start < l && strings.TrimSpace(f.lines[start]) == "" {
		start++
	}
	return start
}

// exportRe matches a kernel export line; the name is filled in by
// afterExports.
var exportRe = regexp.MustCompile(`^\s*EXPORT_(?:SYMBOL|PER_CPU_SYMBOL|STATIC_CALL)\w*\(\s*(\w+)\s*[,)]`)

// afterExports returns the line after end, moved past the kernel export
// lines of name that follow it (EXPORT_SYMBOL(name); and its kin), so
// that a definition put after a symbol does not part it from its export.
func (f *cFile) afterExports(end int, name string) int {
	next := end + 1
	for j := next; j < len(f.lines); j++ {
		t := strings.TrimSpace(f.lines[j])
		if t == "" {
			continue
		}
		m := exportRe.FindStringSubmatch(t)
		if m == nil || m[1] != name {
			break
		}
		if e, _, ok := f.stmtEnd(j); ok {
			j = e
		}
		next = j + 1
	}
	return next
}

// hasWord reports whether line holds name as a whole identifier.
func hasWord(line, name string) bool {
	for i := 0; ; {
		j := strings.Index(line[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !identByte(line[j-1])) && (end == len(line) || !identByte(line[end])) {
			return true
		}
		i = j + 1
	}
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// findDef returns the 0-based line that defines name in f, found by
// name alone (no debug information): the first line at depth 0 that
// names it in a statement that is not an extern declaration, an export or
// a prototype; for a function, a statement with a body. -1 if none.
func (f *cFile) findDef(name string, fn bool) int {
	for l, text := range f.lines {
		if f.depth[l] != 0 || f.comment[l] || !hasWord(text, name) {
			continue
		}
		t := strings.TrimSpace(text)
		if strings.HasPrefix(t, "#") || strings.HasPrefix(t, "extern ") || exportRe.MatchString(t) ||
			strings.HasPrefix(t, "//") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "/*") {
			continue
		}
		_, body, ok := f.stmtEnd(l)
		if !ok || fn != body {
			continue
		}
		if !fn && strings.HasPrefix(strings.TrimSpace(f.lines[f.stmtStart(l)]), "extern ") {
			continue
		}
		return l
	}
	return -1
}
