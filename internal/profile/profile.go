// Package profile reads which functions are hot from a profile.
//
// [Read] takes the output of the common profilers and reduces it to one
// number per function: its self fraction, the share of the profile's cost
// spent in the function's own code (not in its callees). The format is
// detected from the content:
//
//   - perf report --stdio output: the "# Overhead  Command  Shared Object
//     Symbol" table, or with call graphs the "# Children  Self ..." one,
//     whose Self column is used;
//   - perf script output: samples with or without call chains; each
//     sample's leaf frame gets the sample's period;
//   - folded stacks ("main;foo;bar 123", Brendan Gregg's format): the last
//     frame gets the count;
//   - pprof profiles (gzip'd or plain protobuf), such as Go's runtime/pprof
//     CPU profiles: the leaf function of each sample, innermost inlined
//     frame first, gets the default sample value;
//   - valgrind callgrind.out files: each function's (fn=) self cost of the
//     first event, Ir for a default callgrind run; the inclusive costs of
//     the calls it makes are not counted.
package profile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Hotness is how much of a profile's cost each function took itself.
type Hotness struct {
	// Source names the format read: "perf report", "perf script",
	// "folded", "pprof" or "callgrind".
	Source string
	// Funcs maps a symbol name to its self fraction of the profile, in
	// [0, 1]. The fractions sum to at most 1: cost the profile could not
	// attribute to a named function (unknown addresses) is left out.
	// Names are as the profile spells them, less perf's "[k] "/"[.] "
	// markers, "+0x.." offsets and flame-graph "_[k]" annotations.
	Funcs map[string]float64
	// Total is the profile's whole cost in Unit: samples or event counts
	// for perf, the sum of counts for folded stacks, the default sample
	// value for pprof, instructions (Ir) for callgrind.
	Total float64
	// Unit names what Total counts, for example "cpu-clock", "samples",
	// "cpu/nanoseconds" or "Ir".
	Unit string
	// Skipped counts input lines that were not understood and were left
	// out; a few are normal in hand-edited or truncated files.
	Skipped int
	// Children maps a symbol to its children fraction (the samples in
	// the function or anything it called), from perf report tables with a
	// Children column (recorded with call graphs, perf report --children);
	// nil for every other profile.
	Children map[string]float64

	byBase map[string]float64 // summed fractions by clone base name
}

// FuncHeat is one function's self fraction.
type FuncHeat struct {
	Name string
	Self float64
}

// ErrUnknownFormat is wrapped by the error [Read] and [Parse] return when
// the content is not a profile format this package reads.
var ErrUnknownFormat = errors.New("unrecognised profile format")

// Read reads the profile in the named file; see the package documentation
// for the formats.
func Read(path string) (*Hotness, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading profile: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// expected lists the formats Parse reads, for error messages.
const expected = `perf report --stdio output (a "# Overhead ... Symbol" table), perf script output, ` +
	`folded stacks ("a;b;c 123" lines), a pprof profile (gzip'd protobuf) or a valgrind callgrind.out file`

// peekSize is how much of the input format detection looks at.
const peekSize = 64 << 10

// maxLine is the longest text line accepted.
const maxLine = 16 << 20

// Parse reads a profile from r; name is used in error messages.
func Parse(r io.Reader, name string) (*Hotness, error) {
	br := bufio.NewReaderSize(r, peekSize)
	head, err := br.Peek(peekSize)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, fmt.Errorf("reading profile %s: %w", name, err)
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return nil, fmt.Errorf("%s: empty profile", name)
	}
	var h *Hotness
	switch detect(head) {
	case fmtPprof:
		h, err = parsePprof(br, name)
	case fmtCallgrind:
		h, err = parseCallgrind(br, name)
	case fmtPerfReport:
		h, err = parsePerfReport(br, name)
	case fmtPerfScript:
		h, err = parsePerfScript(br, name)
	case fmtFolded:
		h, err = parseFolded(br, name)
	default:
		return nil, fmt.Errorf("%s: %w: expected %s", name, ErrUnknownFormat, expected)
	}
	if err != nil {
		return nil, err
	}
	h.index()
	return h, nil
}

type format int

const (
	fmtUnknown format = iota
	fmtPprof
	fmtCallgrind
	fmtPerfReport
	fmtPerfScript
	fmtFolded
)

var (
	perfReportHeader = regexp.MustCompile(`^#\s+(Children\s+Self|Overhead)(\s|$)`)
	foldedLine       = regexp.MustCompile(`^\S.*\s[0-9]+(\.[0-9]+)?$`)
)

// detect guesses the format of a profile from its first bytes.
func detect(head []byte) format {
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return fmtPprof // gzip: pprof's usual encoding
	}
	text := head
	if len(head) == peekSize {
		// The last line may be cut short.
		if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
			text = head[:i+1]
		}
	}
	if bytes.IndexByte(text, 0) >= 0 || !utf8.Valid(text) {
		return fmtPprof // binary: a plain protobuf profile, or nothing
	}
	lines := strings.Split(string(text), "\n")
	var sawEvents, sawFn, sawScript bool
	folded := 0
	notFolded := false
	for _, line := range lines {
		line = strings.TrimRight(line, "\r")
		switch {
		case line == "# callgrind format":
			return fmtCallgrind
		case strings.HasPrefix(line, "events:"):
			sawEvents = true
		case strings.HasPrefix(line, "fn="):
			sawFn = true
		case perfReportHeader.MatchString(line):
			return fmtPerfReport
		}
		if !sawScript && scriptHeader.MatchString(strings.TrimLeft(line, " \t")) {
			sawScript = true
		}
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if foldedLine.MatchString(t) {
			folded++
		} else {
			notFolded = true
		}
	}
	switch {
	case sawEvents && sawFn:
		return fmtCallgrind
	case sawScript:
		return fmtPerfScript
	case folded > 0 && !notFolded:
		return fmtFolded
	}
	return fmtUnknown
}

// scanner returns a line scanner over r that accepts long lines.
func scanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return sc
}

// scanErr turns a scanner error into one naming the file and line.
func scanErr(name string, line int, err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("%s:%d: line longer than %d bytes", name, line+1, maxLine)
	}
	return fmt.Errorf("reading profile %s: %w", name, err)
}

// accum collects self costs by function name.
type accum struct {
	self  map[string]float64
	total float64
}

func newAccum() *accum { return &accum{self: make(map[string]float64)} }

// add attributes cost to function fn (already cleaned); unknown functions
// count towards the total only.
func (a *accum) add(fn string, cost float64) {
	a.total += cost
	if fn != "" && !unknownName(fn) {
		a.self[fn] += cost
	}
}

// hotness turns the costs into fractions of total (or of the sum of the
// costs, when that is larger).
func (a *accum) hotness(source, unit string, total float64) *Hotness {
	if a.total > total {
		total = a.total
	}
	h := &Hotness{Source: source, Funcs: make(map[string]float64, len(a.self)), Total: total, Unit: unit}
	for fn, c := range a.self {
		if c > 0 {
			h.Funcs[fn] = c / total
		}
	}
	return h
}

var hexAddr = regexp.MustCompile(`^(0x)?[0-9a-fA-F]{8,}$`)

// unknownName reports whether a symbol is a placeholder for code the
// profiler could not name.
func unknownName(s string) bool {
	return s == "[unknown]" || s == "0" || hexAddr.MatchString(s)
}

var (
	perfMarker = regexp.MustCompile(`^\[[.kgujHh]\] `)
	flameNote  = regexp.MustCompile(`_\[[kijw]\]$`)
	cloneTail  = regexp.MustCompile(`\.(isra|constprop|part|cold|lto_priv|localalias|llvm|specialize)(\.[0-9]+)*$`)
)

// cleanName strips a perf "[k] " marker and a flame-graph "_[k]" note.
func cleanName(s string) string {
	s = strings.TrimSpace(s)
	s = perfMarker.ReplaceAllString(s, "")
	s = flameNote.ReplaceAllString(s, "")
	return strings.TrimSpace(s)
}

// CloneBase returns a symbol's name less gcc and clang clone suffixes
// (.isra.N, .constprop.N, .part.N, .cold, .lto_priv.N, .llvm.N and their
// combinations): the name of the source function the clone came from.
func CloneBase(name string) string {
	for {
		b := cloneTail.ReplaceAllString(name, "")
		if b == name || b == "" {
			return name
		}
		name = b
	}
}

// index builds the clone-base sums used by Of.
func (h *Hotness) index() {
	h.byBase = make(map[string]float64, len(h.Funcs))
	for fn, f := range h.Funcs {
		h.byBase[CloneBase(fn)] += f
	}
}

// Of returns the self fraction of the named function. The name may carry a
// perf "[k] " or "[.] " marker. When the profile has no entry of exactly
// that name, Of returns the summed fractions of every entry with the same
// clone base (see [CloneBase]), so "foo", "foo.isra.0" and "foo.cold" find
// each other across builds. It returns 0 for functions not in the profile.
func (h *Hotness) Of(name string) float64 {
	if h == nil {
		return 0
	}
	name = cleanName(name)
	if f, ok := h.Funcs[name]; ok {
		return f
	}
	base := CloneBase(name)
	if h.byBase != nil {
		return h.byBase[base]
	}
	var sum float64
	for fn, f := range h.Funcs {
		if CloneBase(fn) == base {
			sum += f
		}
	}
	return sum
}

// Top returns the n hottest functions, hottest first (ties by name); n <= 0
// returns all of them.
func (h *Hotness) Top(n int) []FuncHeat {
	if h == nil {
		return nil
	}
	all := make([]FuncHeat, 0, len(h.Funcs))
	for fn, f := range h.Funcs {
		all = append(all, FuncHeat{fn, f})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Self != all[j].Self {
			return all[i].Self > all[j].Self
		}
		return all[i].Name < all[j].Name
	})
	if n > 0 && n < len(all) {
		all = all[:n]
	}
	return all
}
