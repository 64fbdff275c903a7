package demo

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/perfbot/perfbot/internal/testutil"
)

// needTools skips the test when git or the C toolchain that builds the
// generated benchmark is missing (fails in strict mode).
func needTools(t *testing.T) {
	t.Helper()
	testutil.NeedTool(t, "git", "make", "cc")
}

// binInfo is what the tests read of a built benchmark.
type binInfo struct {
	path string
	syms map[string]elf.Symbol
	f    *elf.File
	raw  []byte
}

func readBin(t *testing.T, path string) *binInfo {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := &binInfo{path: path, syms: make(map[string]elf.Symbol), f: f, raw: raw}
	for _, s := range syms {
		if s.Name != "" {
			b.syms[s.Name] = s
		}
	}
	return b
}

func (b *binInfo) sym(t *testing.T, name string) elf.Symbol {
	t.Helper()
	s, ok := b.syms[name]
	if !ok {
		t.Fatalf("%s has no symbol %s", b.path, name)
	}
	return s
}

// code returns the bytes of function name.
func (b *binInfo) code(t *testing.T, name string) []byte {
	t.Helper()
	s := b.sym(t, name)
	sec := b.f.Section(".text")
	if s.Value < sec.Addr || s.Value+s.Size > sec.Addr+sec.Size {
		t.Fatalf("%s: %s is not in .text", b.path, name)
	}
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	off := s.Value - sec.Addr
	return data[off : off+s.Size]
}

// loop is a loop found by disassembly: [start, end) holds its code, from
// the target of its backward branch to the end of that branch.
type loop struct{ start, end uint64 }

func (l loop) offset() uint64 { return l.start % 64 }
func (l loop) size() uint64   { return l.end - l.start }

// crosses says whether the loop's code spans two 64-byte lines.
func (l loop) crosses() bool { return l.start/64 != (l.end-1)/64 }

func (l loop) String() string {
	return fmt.Sprintf("%d bytes at %#x (byte %d of its line)", l.size(), l.start, l.offset())
}

// innerLoop disassembles function name and returns its innermost loop:
// the backward conditional branch with the shortest span.
func (b *binInfo) innerLoop(t *testing.T, name string) loop {
	t.Helper()
	code := b.code(t, name)
	base := b.sym(t, name).Value
	best := loop{}
	for pc := 0; pc < len(code); {
		inst, err := x86asm.Decode(code[pc:], 64)
		if err != nil {
			t.Fatalf("%s: decoding %s+%#x: %v", b.path, name, pc, err)
		}
		next := pc + inst.Len
		if rel, ok := inst.Args[0].(x86asm.Rel); ok && isCondJump(inst.Op) && rel < 0 {
			l := loop{start: base + uint64(next+int(rel)), end: base + uint64(next)}
			if best.end == 0 || l.size() < best.size() {
				best = l
			}
		}
		pc = next
	}
	if best.end == 0 {
		t.Fatalf("%s: no loop in %s", b.path, name)
	}
	return best
}

func isCondJump(op x86asm.Op) bool {
	switch op {
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO,
		x86asm.JP, x86asm.JS:
		return true
	}
	return false
}

// funcs returns the binary's function symbols in .text, name to symbol.
func (b *binInfo) funcs() map[string]elf.Symbol {
	out := make(map[string]elf.Symbol)
	for name, s := range b.syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			out[name] = s
		}
	}
	return out
}

// builder builds commits of one repository once per (revision, environment).
type builder struct {
	repo *Repo
	dir  string
	mu   sync.Mutex
	done map[string]*buildResult
}

type buildResult struct {
	once sync.Once
	bin  string
	err  error
}

func newBuilder(t *testing.T, r *Repo) *builder {
	return &builder{repo: r, dir: t.TempDir(), done: make(map[string]*buildResult)}
}

// build builds rev with env and returns the binary's path.
func (b *builder) build(rev string, env ...string) (string, error) {
	key := rev + "\x00" + strings.Join(env, "\x00")
	b.mu.Lock()
	r, ok := b.done[key]
	if !ok {
		r = &buildResult{}
		b.done[key] = r
	}
	n := len(b.done)
	b.mu.Unlock()
	r.once.Do(func() {
		dir := filepath.Join(b.dir, fmt.Sprintf("b%03d", n))
		r.bin, r.err = buildRev(context.Background(), b.repo.Dir, rev, dir, env...)
	})
	return r.bin, r.err
}

// buildAll builds each (rev, env) job, two at a time, and returns the
// binaries in order.
func (b *builder) buildAll(t *testing.T, jobs ...buildJob) []string {
	t.Helper()
	out := make([]string, len(jobs))
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = b.build(j.rev, j.env...)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("building %s: %v", jobs[i].rev, err)
		}
	}
	return out
}

type buildJob struct {
	rev string
	env []string
}

func bj(rev string, env ...string) buildJob { return buildJob{rev, env} }

// alignFlags is the text-alignment knob: every function and loop at the
// start of a 64-byte line.
const alignFlags = "CFLAGS=" + AlignCFLAGS
