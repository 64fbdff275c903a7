package profile

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	pprof "github.com/google/pprof/profile"
)

// parseFolded reads folded stacks: "frame;frame;leaf count" per line.
func parseFolded(r io.Reader, name string) (*Hotness, error) {
	sc := scanner(r)
	acc := newAccum()
	lineNo, skipped, stacks := 0, 0, 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexAny(line, " \t")
		if sp < 0 {
			skipped++
			continue
		}
		n, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
			skipped++
			continue
		}
		stack := strings.TrimSpace(line[:sp])
		leaf := stack
		if i := strings.LastIndexByte(stack, ';'); i >= 0 {
			leaf = stack[i+1:]
		}
		stacks++
		acc.add(cleanName(leaf), n)
	}
	if err := sc.Err(); err != nil {
		return nil, scanErr(name, lineNo, err)
	}
	if stacks == 0 || acc.total <= 0 {
		return nil, fmt.Errorf("%s: folded stacks with no counts", name)
	}
	h := acc.hotness("folded", "samples", acc.total)
	h.Skipped = skipped
	return h, nil
}

// maxPprof bounds the uncompressed size of a pprof profile.
const maxPprof = 1 << 30

// parsePprof reads a pprof protobuf profile, gzip'd or not.
func parsePprof(r io.Reader, name string) (*Hotness, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPprof+1))
	if err != nil {
		return nil, fmt.Errorf("reading profile %s: %w", name, err)
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: bad gzip data: %v", name, err)
		}
		data, err = io.ReadAll(io.LimitReader(zr, maxPprof+1))
		if err != nil {
			return nil, fmt.Errorf("%s: bad gzip data: %v", name, err)
		}
	}
	if len(data) > maxPprof {
		return nil, fmt.Errorf("%s: pprof profile larger than %d bytes", name, maxPprof)
	}
	p, err := parseProto(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: binary data that is not a pprof profile (%v); expected %s", name, ErrUnknownFormat, err, expected)
	}
	if len(p.SampleType) == 0 {
		return nil, fmt.Errorf("%s: pprof profile has no sample types", name)
	}
	idx, err := p.SampleIndexByName("")
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	st := p.SampleType[idx]
	acc := newAccum()
	for _, s := range p.Sample {
		if idx >= len(s.Value) || s.Value[idx] <= 0 {
			continue
		}
		v := float64(s.Value[idx])
		fn := ""
		// Location[0] is the leaf; its Line[0] the innermost inlined
		// function.
		if len(s.Location) > 0 && s.Location[0] != nil && len(s.Location[0].Line) > 0 {
			if f := s.Location[0].Line[0].Function; f != nil {
				fn = f.Name
			}
		}
		acc.add(fn, v)
	}
	if acc.total <= 0 {
		return nil, fmt.Errorf("%s: pprof profile has no samples of %s/%s", name, st.Type, st.Unit)
	}
	return acc.hotness("pprof", st.Type+"/"+st.Unit, acc.total), nil
}

// parseProto decodes a protobuf profile, turning a decoder panic on
// hostile input into an error.
func parseProto(data []byte) (p *pprof.Profile, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("decoder panic: %v", r)
		}
	}()
	return pprof.ParseUncompressed(data)
}

var (
	cgName   = regexp.MustCompile(`^\(([0-9]+)\)(?:\s+(.*))?$`)
	cgRecSfx = regexp.MustCompile(`'[0-9]+$`)
)

// parseCallgrind reads a callgrind.out file: each function's self cost of
// the first event.
func parseCallgrind(r io.Reader, name string) (*Hotness, error) {
	sc := scanner(r)
	var (
		acc      = newAccum()
		names    = map[string]string{} // compressed fn ids
		fn       string
		haveFn   bool
		events   []string
		npos     = 1
		summary  float64
		inCall   bool // the next cost line is a call's inclusive cost
		lineNo   int
		costs    int
		skipped  int
		decodeFn = func(v string) string {
			v = strings.TrimSpace(v)
			if m := cgName.FindStringSubmatch(v); m != nil {
				if m[2] != "" {
					names[m[1]] = m[2]
					return m[2]
				}
				return names[m[1]]
			}
			return v
		}
	)
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		c := line[0]
		if c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*' {
			if inCall {
				inCall = false
				continue
			}
			f := strings.Fields(line)
			if len(f) <= npos {
				continue // positions only: no cost
			}
			v, err := parseCost(f[npos])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: bad cost %q: %v", name, lineNo, f[npos], err)
			}
			if !haveFn {
				skipped++
				continue
			}
			costs++
			acc.add(fn, v)
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if ok && !strings.Contains(key, " ") && !strings.Contains(key, ":") {
			switch key {
			case "fn":
				fn = cgRecSfx.ReplaceAllString(decodeFn(val), "")
				haveFn = true
			case "cfn", "cfni":
				decodeFn(val) // defines the id for later fn= lines
			case "calls":
				inCall = true
			}
			continue
		}
		key, val, ok = strings.Cut(line, ":")
		if !ok {
			skipped++
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "events":
			events = strings.Fields(val)
		case "positions":
			npos = len(strings.Fields(val))
			if npos == 0 {
				npos = 1
			}
		case "summary", "totals":
			if f := strings.Fields(val); len(f) > 0 && summary == 0 {
				summary, _ = parseCost(f[0])
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, scanErr(name, lineNo, err)
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("%s: callgrind file without an events: line", name)
	}
	if costs == 0 || acc.total <= 0 {
		return nil, fmt.Errorf("%s: callgrind file has no %s costs", name, events[0])
	}
	h := acc.hotness("callgrind", events[0], summary)
	h.Skipped = skipped
	return h, nil
}

// parseCost parses a callgrind cost: decimal or 0x hex.
func parseCost(s string) (float64, error) {
	var (
		u   uint64
		err error
	)
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		u, err = strconv.ParseUint(s[2:], 16, 64)
	} else {
		u, err = strconv.ParseUint(s, 10, 64)
	}
	return float64(u), err
}
