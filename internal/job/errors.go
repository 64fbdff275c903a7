package job

import (
	"fmt"
	"strings"
)

// A SyntaxError is one problem in a job file, at a line, printed
// "jobs/x.yaml:12: run.timeout: invalid duration "6o s"".
type SyntaxError struct {
	File  string // the job file's path as given to Load or Parse
	Line  int    // 1-based; 0 when the problem has no line
	Field string // dotted path of the field, e.g. "metrics[1].regex"; may be ""
	Msg   string
}

func (e *SyntaxError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// An ErrorList is every problem found in a job file, in line order. Load and
// Parse return one (never empty) when the file is malformed.
type ErrorList []*SyntaxError

// Error prints one problem per line.
func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap gives the problems to errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// suggestion returns a known field close to an unknown one, or "".
func suggestion(key string, known []string) string {
	if alias, ok := aliases[key]; ok {
		for _, k := range known {
			if k == alias {
				return alias
			}
		}
	}
	best, bestDist := "", 3 // at most two edits
	for _, k := range known {
		if d := editDistance(key, k); d < bestDist && d < len(key) {
			best, bestDist = k, d
		}
	}
	return best
}

// aliases maps words people write for a field to its name.
var aliases = map[string]string{
	"iters":       "runs",
	"iterations":  "runs",
	"count":       "runs",
	"repeat":      "runs",
	"repeats":     "runs",
	"samples":     "runs",
	"cmd":         "command",
	"environment": "env",
	"matrix":      "params",
	"warm-up":     "warmup",
	"warm_up":     "warmup",
	"pattern":     "regex",
	"regexp":      "regex",
	"path":        "json",
	"cpus":        "cpu",
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
