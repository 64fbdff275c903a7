// Building and running the generated benchmark without perfbot: the
// calibration (calibrate.go) and the tests that check the effects on the
// host use these.

package demo

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/internal/disasm"
)

// lineSize is the size of a line of code in bytes.
const lineSize = 64

// buildTree writes the tree's files into dir (which must not exist or be
// empty), runs "make bench" there with only the environment's compiler
// settings (CFLAGS, LDFLAGS, EXTRA_OBJS and MAKEFLAGS of the caller are not
// passed on) and returns the path of the binary.
func buildTree(ctx context.Context, t *tree, dir string) (string, error) {
	if err := emptyDir(dir); err != nil {
		return "", err
	}
	files, err := t.files()
	if err != nil {
		return "", err
	}
	if err := writeFiles(dir, files); err != nil {
		return "", err
	}
	mk := exec.CommandContext(ctx, "make", "bench")
	mk.Dir = dir
	mk.Env = makeEnv()
	if out, err := mk.CombinedOutput(); err != nil {
		return "", fmt.Errorf("demo: make bench in %s failed: %v\n%s", dir, err, tail(out, 15))
	}
	return filepath.Join(dir, "bench"), nil
}

// makeEnv is the environment of a build: the caller's, less the
// variables that would change it.
func makeEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "CFLAGS" && name != "LDFLAGS" && name != "EXTRA_OBJS" && name != "MAKEFLAGS" {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// innerLoop returns the start address of the innermost loop of function
// fn in the ELF binary bin, found by disassembly (the target of its
// backward branch), and the loop's length in bytes.
func innerLoop(bin, fn string) (start uint64, length int, err error) {
	f, err := elf.Open(bin)
	if err != nil {
		return 0, 0, fmt.Errorf("demo: %v", err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return 0, 0, fmt.Errorf("demo: %s: %v", bin, err)
	}
	i := slices.IndexFunc(syms, func(s elf.Symbol) bool { return s.Name == fn && elf.ST_TYPE(s.Info) == elf.STT_FUNC })
	if i < 0 {
		return 0, 0, fmt.Errorf("demo: %s has no function %s", bin, fn)
	}
	s := syms[i]
	sec := f.Section(".text")
	if sec == nil || s.Value < sec.Addr || s.Value+s.Size > sec.Addr+sec.Size {
		return 0, 0, fmt.Errorf("demo: %s: %s is not in .text", bin, fn)
	}
	data, err := sec.Data()
	if err != nil {
		return 0, 0, fmt.Errorf("demo: %s: %v", bin, err)
	}
	loops, err := disasm.LoopsFor(f.Machine, data[s.Value-sec.Addr:s.Value-sec.Addr+s.Size], s.Value)
	if err != nil {
		return 0, 0, fmt.Errorf("demo: disassembling %s in %s: %v", fn, bin, err)
	}
	if len(loops) == 0 {
		return 0, 0, fmt.Errorf("demo: %s in %s has no loop", fn, bin)
	}
	in := loops[0]
	for _, l := range loops[1:] {
		if l.Depth > in.Depth {
			in = l
		}
	}
	return in.Start, in.Len, nil
}

// loopOffset is the offset in its 64-byte line of text_kernel's inner
// loop in bin.
func loopOffset(bin string) (int, error) {
	start, _, err := innerLoop(bin, "text_kernel")
	return int(start % lineSize), err
}

// runMetric runs the binary bin once with args, in its own directory, and
// returns the value of metric (a line "metric: value" of its output).
func runMetric(ctx context.Context, bin string, args []string, metric string) (float64, error) {
	return runPinned(ctx, bin, args, metric, -1)
}

// runPinned is runMetric with the process pinned to cpu (none when cpu is
// negative). It is pinned just after it starts: the benchmark's figure is
// the fastest of its batches, so its first milliseconds do not count.
func runPinned(ctx context.Context, bin string, args []string, metric string, cpu int) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = filepath.Dir(bin)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("demo: running %s: %v", bin, err)
	}
	if cpu >= 0 {
		var set unix.CPUSet
		set.Set(cpu)
		_ = unix.SchedSetaffinity(cmd.Process.Pid, &set) // it may have exited already
	}
	if err := cmd.Wait(); err != nil {
		return 0, fmt.Errorf("demo: running %s %s: %v", bin, strings.Join(args, " "), err)
	}
	out := stdout.Bytes()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(metric) + `: ([0-9.eE+-]+)$`)
	m := re.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("demo: %s %s printed no %q line:\n%s", bin, strings.Join(args, " "), metric, tail(out, 5))
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("demo: %s printed a bad %s value %q", bin, metric, m[1])
	}
	return v, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// tail returns the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
