// The calibration: where does this CPU run the text kernel's inner loop
// fast, and where slow?

package demo

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/run"
)

// The rule that says whether a loop offset matters on this CPU: the
// confirmation's median pair ratio (slow/fast) is at least MinTextRatio
// and at least as many of its pairs are slower as a one-sided sign test
// at level SignLevel asks for (10 of 12 pairs: p = 0.019).
const (
	MinTextRatio = 1.10
	SignLevel    = 0.02
)

// AutoCPU in [CalibrateOptions].CPU pins the runs to the quietest CPU
// (found by a short calibration of the allowed CPUs).
const AutoCPU = -2

// CalibrateOptions tunes [Calibrate]; the zero value is the default.
type CalibrateOptions struct {
	// Dir is a folder for the builds (created; it must be empty); "" is a
	// temporary folder, removed at the end.
	Dir string
	// Offsets are the inner loop's offsets in its 64-byte line to scan
	// (default 0, 2, ... 62: every other byte; on the project's hosts
	// only bytes 54 to 56 are slow).
	Offsets []int
	// Rounds is the number of scan rounds, each running every offset once
	// in a random order (default 3).
	Rounds int
	// Pairs is the number of fresh interleaved pairs that confirm the
	// largest difference (default 12, at least 10).
	Pairs int
	// CPU pins the runs: a CPU number, -1 for none, or AutoCPU.
	CPU int
	// Seed orders the runs (0 is a seed too).
	Seed uint64
	// Log, when set, receives one line per step (and one when it waits
	// for another perfbot's measurement).
	Log io.Writer
}

// OffsetTime is one scanned offset: its runs' text_ms values and their
// median.
type OffsetTime struct {
	Offset int
	Values []float64
	Median float64
}

// Calibration is what [Calibrate] measured.
type Calibration struct {
	// Scan is the scanned offsets, in the order of CalibrateOptions.Offsets.
	Scan []OffsetTime
	// Placement puts the base's loop at the fast offset of the largest
	// difference of the scan and the text-alignment commit's at the slow
	// one, both checked on the built binaries.
	Placement Placement
	// Ratios are the confirmation's pair ratios (text-alignment commit /
	// base, text_ms); Ratio is their median, Slower how many exceed 1 and
	// Need how many must (the sign test of the rule).
	Ratios        []float64
	Ratio         float64
	Slower, Need  int
	CPU           int // the CPU the runs were pinned to; -1 none
	Runs, Builds  int
	TextEffectPct float64 // (Ratio - 1) * 100
}

// Matters reports whether the loop's offset matters on this CPU, by the
// rule of MinTextRatio and SignLevel.
func (c *Calibration) Matters() bool {
	return c.Ratio >= MinTextRatio && c.Slower >= c.Need
}

// String says what was measured, in one line.
func (c *Calibration) String() string {
	verdict := "the offset matters on this CPU"
	if !c.Matters() {
		verdict = fmt.Sprintf("no offset matters on this CPU (the rule: a median ratio >= %.2f and >= %d of %d pairs slower)", MinTextRatio, c.Need, len(c.Ratios))
	}
	return fmt.Sprintf("inner loop at byte %d vs %d of its line: %+.1f %% text_ms (median of %d interleaved pairs, %d slower); %s",
		c.Placement.Slow, c.Placement.Fast, c.TextEffectPct, len(c.Ratios), c.Slower, verdict)
}

// Calibrate builds the text kernel with its inner loop at each of a few
// offsets of its 64-byte line (text.c compiled to assembly once, its lead
// padding set for each offset, assembled and linked), checking every
// offset on the built binary (ELF symbols and disassembly), times them in
// interleaved rounds, takes
// the largest difference between two offsets that a 16, 32 or 48-byte
// helper can bridge, and confirms it with fresh interleaved pairs of the
// very builds the history's base and text-alignment commit make, holding
// the machine's measuring lock (measure.LockMachine) throughout. It needs
// make and a C compiler, and takes about 15 s on a quiet machine.
func Calibrate(ctx context.Context, opt CalibrateOptions) (*Calibration, error) {
	if opt.Offsets == nil {
		for o := 0; o < lineSize; o += 2 {
			opt.Offsets = append(opt.Offsets, o)
		}
	}
	if opt.Rounds == 0 {
		opt.Rounds = 3
	}
	if opt.Pairs == 0 {
		opt.Pairs = 12
	}
	if opt.Pairs < 10 || opt.Rounds < 1 || len(opt.Offsets) < 2 {
		return nil, fmt.Errorf("demo: calibrate: want at least 2 offsets, 1 round and 10 pairs, not %d, %d and %d", len(opt.Offsets), opt.Rounds, opt.Pairs)
	}
	for _, o := range opt.Offsets {
		if o < 0 || o >= lineSize {
			return nil, fmt.Errorf("demo: calibrate: offset %d is not in 0..63", o)
		}
	}
	dir := opt.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "perfbot-calibrate-")
		if err != nil {
			return nil, fmt.Errorf("demo: %v", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format+"\n", args...)
		}
	}
	// Builds and runs beside another perfbot's would spoil both.
	release, err := measure.LockMachine(ctx, func(holder string) {
		logf("waiting for %s to finish measuring on this machine", holder)
	})
	if err != nil {
		return nil, err
	}
	defer release()
	cal := &Calibration{CPU: opt.CPU}
	if cal.CPU == AutoCPU {
		cal.CPU = -1
		if c, err := run.Calibrate(ctx, run.Allowed(), run.CalibrateOptions{}); err == nil {
			cal.CPU = c.Quietest()
		}
	}
	if cal.CPU >= 0 {
		logf("runs pinned to CPU %d", cal.CPU)
	}
	scan, err := newScanner(ctx, filepath.Join(dir, "scan"))
	if err != nil {
		return nil, err
	}
	cal.Builds++
	lead := scan.lead
	build := func(t *tree, want int, name string) (string, error) {
		bin, err := buildTree(ctx, t, filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		cal.Builds++
		return bin, checkOffset(bin, name, want)
	}
	bins := make([]string, len(opt.Offsets))
	for i, o := range opt.Offsets {
		if bins[i], err = scan.build(ctx, o); err != nil {
			return nil, err
		}
		cal.Builds++
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x63616c6962)) // "calib"
	args := []string{"text", "20"}
	cal.Scan = make([]OffsetTime, len(opt.Offsets))
	for range opt.Rounds {
		for _, i := range rng.Perm(len(bins)) {
			v, err := runPinned(ctx, bins[i], args, MetricText, cal.CPU)
			if err != nil {
				return nil, err
			}
			cal.Runs++
			cal.Scan[i].Offset, cal.Scan[i].Values = opt.Offsets[i], append(cal.Scan[i].Values, v)
		}
	}
	var figures []string
	for i := range cal.Scan {
		cal.Scan[i].Median = median(cal.Scan[i].Values)
		figures = append(figures, fmt.Sprintf("%d: %.3f", cal.Scan[i].Offset, cal.Scan[i].Median))
	}
	logf("text_ms by the inner loop's offset in its line (median of %d rounds): %s", opt.Rounds, strings.Join(figures, ", "))
	fast, slow := widest(cal.Scan)
	p := Placement{Lead: lead(fast.Offset), Hook: (slow.Offset - fast.Offset + lineSize) % lineSize, Fast: fast.Offset, Slow: slow.Offset}
	cal.Placement = p
	logf("largest difference a %d-byte helper bridges: byte %d (%.3f ms) -> %d (%.3f ms); confirming with %d fresh pairs",
		p.Hook, fast.Offset, fast.Median, slow.Offset, slow.Median, opt.Pairs)
	base, err := build(&tree{Lead: p.Lead}, p.Fast, "base")
	if err != nil {
		return nil, err
	}
	text, err := build(&tree{Lead: p.Lead, Hook: p.Hook}, p.Slow, "text-alignment")
	if err != nil {
		return nil, err
	}
	for range opt.Pairs {
		first, second := base, text
		swap := rng.IntN(2) == 1
		if swap {
			first, second = text, base
		}
		a, err := runPinned(ctx, first, args, MetricText, cal.CPU)
		if err != nil {
			return nil, err
		}
		b, err := runPinned(ctx, second, args, MetricText, cal.CPU)
		if err != nil {
			return nil, err
		}
		cal.Runs += 2
		if swap {
			a, b = b, a
		}
		cal.Ratios = append(cal.Ratios, b/a)
		if b > a {
			cal.Slower++
		}
	}
	cal.Ratio = median(cal.Ratios)
	cal.Need = signNeed(len(cal.Ratios), SignLevel)
	cal.TextEffectPct = (cal.Ratio - 1) * 100
	logf("%s", cal)
	return cal, nil
}

// widest returns the pair of scanned offsets, fast first, whose medians
// differ most (as a ratio) among those 16, 32 or 48 bytes apart (the
// slow one later in the line, modulo 64).
func widest(scan []OffsetTime) (fast, slow OffsetTime) {
	best := math.Inf(-1)
	for _, a := range scan {
		for _, b := range scan {
			d := (b.Offset - a.Offset + lineSize) % lineSize
			if d%16 != 0 || d == 0 || a.Median <= 0 {
				continue
			}
			if r := b.Median / a.Median; r > best {
				best, fast, slow = r, a, b
			}
		}
	}
	return fast, slow
}

// signNeed is the smallest k such that k or more of n fair coin flips
// come up heads with probability at most level.
func signNeed(n int, level float64) int {
	tail := 0.0
	for k := n; k >= 0; k-- {
		tail += binom(n, k) / math.Pow(2, float64(n))
		if tail > level {
			return k + 1
		}
	}
	return 0
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// scanner builds the benchmark with text.c's lead padding set for a
// given offset of the inner loop: the project is built once (with a
// one-byte lead), text.c compiled to assembly, and each offset's lead
// written into that assembly, which is assembled and linked with the
// other objects of the first build.
type scanner struct {
	dir, cc string
	asm     string // text.s
	o0      int    // where the loop sits with no lead
}

// leadLine is the lead padding's line in text.c's assembly, for a
// one-byte lead.
const leadLine = ".skip 1, 0xcc"

func newScanner(ctx context.Context, dir string) (*scanner, error) {
	bin, err := buildTree(ctx, &tree{Lead: 1}, dir)
	if err != nil {
		return nil, err
	}
	o1, err := loopOffset(bin)
	if err != nil {
		return nil, err
	}
	s := &scanner{dir: dir, cc: os.Getenv("CC"), o0: (o1 - 1 + lineSize) % lineSize}
	if s.cc == "" {
		s.cc = "cc"
	}
	args := append(strings.Fields(strings.ReplaceAll(kernelCFLAGS, "\\", "")), "-S", "-o", "text.s", "text.c")
	if err := s.run(ctx, args...); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "text.s"))
	if err != nil {
		return nil, fmt.Errorf("demo: %v", err)
	}
	if s.asm = string(b); strings.Count(s.asm, leadLine) != 1 {
		return nil, fmt.Errorf("demo: calibrate: text.s does not hold the lead padding %q once", leadLine)
	}
	return s, nil
}

// lead is the padding that puts the inner loop at byte off of its line.
func (s *scanner) lead(off int) int { return (off - s.o0 + 2*lineSize) % lineSize }

// build links the benchmark with its inner loop at byte off of its line
// (checked) and returns the binary's path.
func (s *scanner) build(ctx context.Context, off int) (string, error) {
	name := fmt.Sprintf("text-%d", off)
	src := strings.Replace(s.asm, leadLine, fmt.Sprintf(".skip %d, 0xcc", s.lead(off)), 1)
	if err := os.WriteFile(filepath.Join(s.dir, name+".s"), []byte(src), 0o644); err != nil {
		return "", fmt.Errorf("demo: %v", err)
	}
	bin := "bench-" + strconv.Itoa(off)
	if err := s.run(ctx, "-c", "-o", name+".o", name+".s"); err != nil {
		return "", err
	}
	if err := s.run(ctx, "-o", bin, "data.o", name+".o", "bench.o"); err != nil {
		return "", err
	}
	path := filepath.Join(s.dir, bin)
	return path, checkOffset(path, name, off)
}

func (s *scanner) run(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, s.cc, args...)
	cmd.Dir = s.dir
	cmd.Env = makeEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("demo: calibrate: %s %s: %v\n%s", s.cc, strings.Join(args, " "), err, tail(out, 15))
	}
	return nil
}

// checkOffset checks that the build name put the inner loop at byte want
// of its line.
func checkOffset(bin, name string, want int) error {
	got, err := loopOffset(bin)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("demo: calibrate: the %s build put the inner loop at byte %d of its line, not %d", name, got, want)
	}
	return nil
}
