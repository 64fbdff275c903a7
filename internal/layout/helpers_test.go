package layout

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runCmd runs a command in dir and fails the test on error.
func runCmd(t testing.TB, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// gccBuild writes src to dir/name.c and links it into dir/name with flags.
func gccBuild(t testing.TB, dir, name, src string, flags ...string) string {
	t.Helper()
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	args := append(append([]string{}, flags...), "-o", out, c)
	runCmd(t, dir, "gcc", args...)
	return out
}

// nmAddrs returns the defined symbols of path as nm prints them: name ->
// addresses (several for local duplicates).
func nmAddrs(t testing.TB, path string) map[string][]uint64 {
	t.Helper()
	out := runCmd(t, filepath.Dir(path), "nm", "--defined-only", path)
	m := map[string][]uint64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			t.Fatalf("nm line %q: %v", sc.Text(), err)
		}
		m[f[2]] = append(m[f[2]], addr)
	}
	return m
}

// nm1 returns the one address nm gives name.
func nm1(t testing.TB, syms map[string][]uint64, name string) uint64 {
	t.Helper()
	a := syms[name]
	if len(a) != 1 {
		t.Fatalf("nm: %d symbols called %s", len(a), name)
	}
	return a[0]
}

// objdumpLoop describes the innermost backward branch of function fn as
// objdump disassembles it: the loop's start (the branch target) and the
// address just past the branch.
type objdumpLoop struct{ start, end uint64 }

// objdumpInnerLoop disassembles fn with objdump and returns its shortest
// backward-branch span.
func objdumpInnerLoop(t testing.TB, path, fn string) objdumpLoop {
	t.Helper()
	out := runCmd(t, filepath.Dir(path), "objdump", "-d", "--no-show-raw-insn", path)
	var addrs []uint64
	type br struct{ at, target uint64 }
	var branches []br
	in := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, "<"+fn+">:") {
			in = true
			continue
		}
		if !in {
			continue
		}
		if strings.TrimSpace(line) == "" {
			break
		}
		colon := strings.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		addr, err := strconv.ParseUint(strings.TrimSpace(line[:colon]), 16, 64)
		if err != nil {
			continue
		}
		addrs = append(addrs, addr)
		f := strings.Fields(line[colon+1:])
		if len(f) >= 2 && strings.HasPrefix(f[0], "j") {
			if target, err := strconv.ParseUint(f[1], 16, 64); err == nil && target <= addr {
				branches = append(branches, br{addr, target})
			}
		}
	}
	if len(branches) == 0 {
		t.Fatalf("objdump: no backward branch in %s", fn)
	}
	best := objdumpLoop{}
	for _, b := range branches {
		end := uint64(0)
		for i, a := range addrs {
			if a == b.at && i+1 < len(addrs) {
				end = addrs[i+1]
			}
		}
		if end == 0 {
			t.Fatalf("objdump: branch at %#x is the last line of %s", b.at, fn)
		}
		if best.end == 0 || end-b.target < best.end-best.start {
			best = objdumpLoop{b.target, end}
		}
	}
	return best
}

// mustOpen opens a binary or fails the test.
func mustOpen(t testing.TB, path string) *Binary {
	t.Helper()
	b, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return b
}

// changeOf returns the change of symbol name or fails the test.
func changeOf(t testing.TB, d *DiffResult, name string) *Change {
	t.Helper()
	for i := range d.Changes {
		if d.Changes[i].B.Name == name {
			return &d.Changes[i]
		}
	}
	t.Fatalf("no change for %s", name)
	return nil
}

func hasCause(r *Run, kind CauseKind, sym string) bool {
	for _, c := range r.Causes {
		if c.Kind == kind && (sym == "" || c.Symbol != nil && c.Symbol.Name == sym) {
			return true
		}
	}
	return false
}
