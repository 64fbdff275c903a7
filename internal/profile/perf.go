package profile

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

var (
	perfSamples    = regexp.MustCompile(`^# Samples: ([0-9.]+[KMG]?)\s+of event '([^']*)'`)
	perfEventCount = regexp.MustCompile(`^# Event count \(approx\.\): ([0-9]+)`)
	perfDots       = regexp.MustCompile(`\.+`)
	multiSpace     = regexp.MustCompile(`\s{2,}`)
)

// reportCols is the layout of a perf report table, from its header line
// and the dotted line under it.
type reportCols struct {
	bounds   []int // byte offset where each column starts; bounds[0] = 0
	self     int   // column of the self percentage
	children int   // column of the children percentage; -1 when none
	pcts     []int // every percentage column
	symbol   int
}

// field returns column i of a table row.
func (c *reportCols) field(row string, i int) string {
	lo := c.bounds[i]
	if lo >= len(row) {
		return ""
	}
	if i+1 < len(c.bounds) && c.bounds[i+1] < len(row) {
		return strings.TrimSpace(row[lo:c.bounds[i+1]])
	}
	return strings.TrimSpace(row[lo:])
}

// parsePercent parses "12.34%".
func parsePercent(s string) (float64, bool) {
	if !strings.HasSuffix(s, "%") {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || f < 0 || f > 100 {
		return 0, false
	}
	return f, true
}

// parsePerfReport reads perf report --stdio output. Only the first event's
// table is read when the report holds several.
func parsePerfReport(r io.Reader, name string) (*Hotness, error) {
	sc := scanner(r)
	var (
		header  []string // column names, waiting for the dotted line
		cols    *reportCols
		rows    int
		lineNo  int
		unit    = "samples"
		total   float64
		samples float64
		selfSum float64
		acc     = newAccum()
		// children: each symbol's children (inclusive) fraction, summed
		// over its rows (one per command and object: their samples are
		// apart).
		children map[string]float64
	)
	for sc.Scan() {
		lineNo++
		line := strings.TrimRight(sc.Text(), " \r")
		if m := perfSamples.FindStringSubmatch(line); m != nil {
			if rows > 0 {
				break // a second event's table: keep the first
			}
			samples = parseCount(m[1])
			unit = m[2]
			continue
		}
		if m := perfEventCount.FindStringSubmatch(line); m != nil && rows == 0 {
			total, _ = strconv.ParseFloat(m[1], 64)
			continue
		}
		if perfReportHeader.MatchString(line) {
			if rows > 0 {
				break
			}
			header = multiSpace.Split(strings.TrimSpace(strings.TrimPrefix(line, "#")), -1)
			cols = nil
			continue
		}
		if header != nil && strings.HasPrefix(line, "# .") {
			c, err := layout(header, line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", name, lineNo, err)
			}
			cols, header = c, nil
			continue
		}
		if cols == nil || line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// A table row has a percentage in every percentage column and
		// a symbol; call-graph lines under it do not.
		ok := true
		for _, i := range cols.pcts {
			if _, isPct := parsePercent(cols.field(line, i)); !isPct {
				ok = false
				break
			}
		}
		sym := cleanName(cols.field(line, cols.symbol))
		if !ok || sym == "" {
			continue
		}
		self, _ := parsePercent(cols.field(line, cols.self))
		rows++
		selfSum += self
		acc.add(sym, self/100)
		if cols.children >= 0 && !unknownName(sym) {
			if children == nil {
				children = map[string]float64{}
			}
			c, _ := parsePercent(cols.field(line, cols.children))
			children[sym] = min(children[sym]+c/100, 1)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, scanErr(name, lineNo, err)
	}
	if cols == nil {
		return nil, fmt.Errorf("%s: perf report output without its column header (\"# Overhead ... Symbol\" and the dotted line under it)", name)
	}
	if rows == 0 {
		return nil, fmt.Errorf("%s: perf report table has no rows", name)
	}
	if selfSum > 100.5 {
		return nil, fmt.Errorf("%s: perf report self percentages sum to %.2f%%, more than 100%%", name, selfSum)
	}
	if total == 0 {
		total = samples
	}
	h := acc.hotness("perf report", unit, 1)
	h.Total = total
	h.Children = children
	return h, nil
}

// layout finds the columns of a perf report table from its header names and
// the dotted line under them.
func layout(names []string, dots string) (*reportCols, error) {
	runs := perfDots.FindAllStringIndex(dots, -1)
	if len(runs) != len(names) {
		return nil, fmt.Errorf("perf report header has %d columns but the dotted line under it %d", len(names), len(runs))
	}
	c := &reportCols{self: -1, children: -1, symbol: -1}
	for i, run := range runs {
		if i == 0 {
			c.bounds = append(c.bounds, 0)
		} else {
			c.bounds = append(c.bounds, run[0])
		}
		switch names[i] {
		case "Self":
			c.self = i
			c.pcts = append(c.pcts, i)
		case "Children":
			c.children = i
			c.pcts = append(c.pcts, i)
		case "Overhead":
			if c.self < 0 {
				c.self = i
			}
			c.pcts = append(c.pcts, i)
		case "Symbol":
			c.symbol = i
		}
	}
	if c.self < 0 {
		return nil, fmt.Errorf("perf report table has no Self or Overhead column")
	}
	if c.symbol < 0 {
		return nil, fmt.Errorf("perf report table has no Symbol column (sort by symbol: perf report --sort sym)")
	}
	return c, nil
}

// parseCount parses perf's sample counts, which may be abbreviated ("12K").
func parseCount(s string) float64 {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1e3, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1e9, strings.TrimSuffix(s, "G")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return f * mult
}

var (
	// scriptHeader matches a perf script sample line: command, optional
	// pid/tid and [cpu], time, optional period, event name, and what
	// follows (the sample's ip and symbol when there is no call chain).
	scriptHeader = regexp.MustCompile(`^\S.*?\s+[0-9]+\.[0-9]+:\s+(?:([0-9]+)\s+)?(\S+):(?:\s+(.*))?$`)
	// scriptFrame matches "ip symbol+off (dso)" with the dso optional.
	scriptFrame = regexp.MustCompile(`^\s*([0-9a-fA-F]+)\s+(.+?)(?:\s+\(([^()]*)\))?\s*$`)
	symOffset   = regexp.MustCompile(`\+0x[0-9a-fA-F]+$`)
)

// frameSym returns the function named by a perf script frame line.
func frameSym(frame string) (string, bool) {
	m := scriptFrame.FindStringSubmatch(frame)
	if m == nil {
		return "", false
	}
	return cleanName(symOffset.ReplaceAllString(m[2], "")), true
}

// parsePerfScript reads perf script output, giving each sample's period
// (or 1 when not printed) to its leaf frame. Only samples of the first
// event seen are counted.
func parsePerfScript(r io.Reader, name string) (*Hotness, error) {
	sc := scanner(r)
	var (
		acc     = newAccum()
		event   string
		lineNo  int
		samples int
		inStack bool // reading the frames of a counted sample
		weight  float64
		leaf    bool // the current sample's leaf is still to come
		skipped int
	)
	for sc.Scan() {
		lineNo++
		line := strings.TrimRight(sc.Text(), " \r")
		if line == "" {
			inStack = false
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		m := scriptHeader.FindStringSubmatch(strings.TrimLeft(line, " \t"))
		if m == nil && (line[0] == ' ' || line[0] == '\t') {
			if !inStack {
				continue // frames of a sample not counted
			}
			if leaf {
				sym, ok := frameSym(line)
				if !ok {
					skipped++
					continue
				}
				acc.add(sym, weight)
				leaf = false
			}
			continue
		}
		if m == nil {
			skipped++
			inStack = false
			continue
		}
		if leaf {
			acc.add("", weight) // previous sample had no frames
		}
		ev := m[2]
		if event == "" {
			event = ev
		}
		if ev != event {
			inStack, leaf = false, false
			continue
		}
		weight = 1
		if m[1] != "" {
			if p, err := strconv.ParseFloat(m[1], 64); err == nil {
				weight = p
			}
		}
		samples++
		inStack, leaf = true, true
		if rest := strings.TrimSpace(m[3]); rest != "" {
			// No call chain: the ip and symbol are on this line.
			if sym, ok := frameSym(rest); ok {
				acc.add(sym, weight)
				leaf = false
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, scanErr(name, lineNo, err)
	}
	if leaf {
		acc.add("", weight)
	}
	if samples == 0 || acc.total <= 0 {
		return nil, fmt.Errorf("%s: perf script output has no samples", name)
	}
	h := acc.hotness("perf script", event, acc.total)
	h.Skipped = skipped
	return h, nil
}
