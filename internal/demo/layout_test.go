package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests build the generated commits with gcc and check, with the
// ELF symbols and a disassembler, that each commit moves what its effect
// says and nothing else. They take a few seconds (about 15 builds).

// checkTextShift checks that after differs from before only by where
// text_kernel sits: same bytes, its inner loop moved from byte p.Fast of
// its 64-byte line to byte p.Slow, data in the same place.
func checkTextShift(t *testing.T, p Placement, before, after *binInfo) {
	t.Helper()
	if !bytes.Equal(before.code(t, "text_kernel"), after.code(t, "text_kernel")) {
		t.Error("text_kernel's bytes changed: the text-alignment commit must not change the loop's code")
	}
	lb, la := before.innerLoop(t, "text_kernel"), after.innerLoop(t, "text_kernel")
	t.Logf("inner loop: before %v; after %v", lb, la)
	if lb.offset() != uint64(p.Fast) || la.offset() != uint64(p.Slow) {
		t.Errorf("the text-alignment commit moved the inner loop from byte %d to %d of its line, want %d to %d (%v)", lb.offset(), la.offset(), p.Fast, p.Slow, p)
	}
	for _, name := range []string{"data_x", "data_y", "text_input"} {
		if b, a := before.sym(t, name).Value, after.sym(t, name).Value; b != a {
			t.Errorf("%s moved from %#x to %#x: the text-alignment commit must not move data", name, b, a)
		}
	}
}

// checkDataShift checks that after differs from before only by where
// data_x and data_y sit: from 0 to 16 mod 32, with all code in place.
func checkDataShift(t *testing.T, before, after *binInfo) {
	t.Helper()
	for _, name := range []string{"data_x", "data_y"} {
		b, a := before.sym(t, name).Value, after.sym(t, name).Value
		t.Logf("%s: before %#x (%d mod 32), after %#x (%d mod 32)", name, b, b%32, a, a%32)
		if b%32 != 0 || a%32 != 16 {
			t.Errorf("%s at %d mod 32 before and %d after the data-alignment commit, want 0 and 16", name, b%32, a%32)
		}
	}
	checkSameCode(t, before, after)
}

// checkSameCode checks that every function has the same address and size.
func checkSameCode(t *testing.T, before, after *binInfo) {
	t.Helper()
	fb, fa := before.funcs(), after.funcs()
	if len(fb) != len(fa) {
		t.Errorf("%d functions before, %d after", len(fb), len(fa))
	}
	for name, sb := range fb {
		if sa, ok := fa[name]; !ok || sa.Value != sb.Value || sa.Size != sb.Size {
			t.Errorf("function %s moved or changed size: %#x+%d before, %#x+%d after", name, sb.Value, sb.Size, sa.Value, sa.Size)
		}
	}
}

func checkIdentical(t *testing.T, what string, before, after *binInfo) {
	t.Helper()
	if !bytes.Equal(before.raw, after.raw) {
		t.Errorf("%s: the binary differs from its parent's", what)
	}
}

func TestLayoutTriage(t *testing.T) {
	needTools(t)
	r := create(t, Options{History: HistoryTriage})
	b := newBuilder(t, r)
	ctx := context.Background()
	textPad, err := padObject(ctx, r.Dir, t.TempDir(), DefaultPlacement.RestorePad(), 0)
	if err != nil {
		t.Fatal(err)
	}
	dataPad, err := padObject(ctx, r.Dir, t.TempDir(), 0, DataRestorePad)
	if err != nil {
		t.Fatal(err)
	}
	base, text, data, real, none := r.ByLabel("base").Hash, r.ByLabel("text-alignment").Hash,
		r.ByLabel("data-alignment").Hash, r.ByLabel("real-regression").Hash, r.ByLabel("no-change").Hash
	bins := b.buildAll(t,
		bj(base), bj(text), bj(data), bj(real), bj(none),
		bj(base, alignFlags), bj(text, alignFlags), bj(real, alignFlags),
		bj(text, "EXTRA_OBJS="+textPad), bj(data, "EXTRA_OBJS="+dataPad))
	var bi []*binInfo
	for _, p := range bins {
		bi = append(bi, readBin(t, p))
	}
	bBase, bText, bData, bReal, bNone := bi[0], bi[1], bi[2], bi[3], bi[4]
	bBaseAl, bTextAl, bRealAl, bTextPad, bDataPad := bi[5], bi[6], bi[7], bi[8], bi[9]

	t.Run("text-alignment", func(t *testing.T) { checkTextShift(t, DefaultPlacement, bBase, bText) })
	t.Run("data-alignment", func(t *testing.T) { checkDataShift(t, bBase, bData) })
	t.Run("real-regression", func(t *testing.T) {
		if bBase.sym(t, "text_kernel") != bReal.sym(t, "text_kernel") ||
			!bytes.Equal(bBase.code(t, "text_kernel"), bReal.code(t, "text_kernel")) {
			t.Error("the real regression moved or changed text_kernel")
		}
		if bBase.sym(t, "text_batch").Size >= bReal.sym(t, "text_batch").Size {
			t.Error("the real regression did not add code to text_batch")
		}
		for _, name := range []string{"data_x", "data_y", "data_kernel"} {
			if bBase.sym(t, name) != bReal.sym(t, name) {
				t.Errorf("the real regression moved %s", name)
			}
		}
	})
	t.Run("no-change", func(t *testing.T) { checkIdentical(t, "no-change", bBase, bNone) })
	t.Run("aligned", func(t *testing.T) {
		// With every function and loop aligned to 64 the two commits put
		// the inner loop at the same offset, inside one line.
		lb, lt, lr := bBaseAl.innerLoop(t, "text_kernel"), bTextAl.innerLoop(t, "text_kernel"), bRealAl.innerLoop(t, "text_kernel")
		t.Logf("aligned builds: base %v; text-alignment %v; real-regression %v", lb, lt, lr)
		if lb.offset() != lt.offset() || lb.offset() != lr.offset() || lb.crosses() {
			t.Errorf("aligned builds put the inner loop at %v, %v and %v", lb, lt, lr)
		}
	})
	t.Run("text-padding", func(t *testing.T) {
		// RestorePad bytes of code linked first put the
		// text-alignment commit's loop back at the base's offset.
		lb, lp := bBase.innerLoop(t, "text_kernel"), bTextPad.innerLoop(t, "text_kernel")
		if lb.offset() != lp.offset() {
			t.Errorf("padded text-alignment commit: loop %v, base %v", lp, lb)
		}
		if d := bTextPad.sym(t, "text_kernel").Value - bText.sym(t, "text_kernel").Value; d != uint64(DefaultPlacement.RestorePad()) {
			t.Errorf("%d bytes of text padding moved text_kernel by %d bytes", DefaultPlacement.RestorePad(), d)
		}
	})
	t.Run("data-padding", func(t *testing.T) {
		// DataRestorePad bytes of data linked first put the
		// data-alignment commit's arrays back at the base's offset mod 32.
		for _, name := range []string{"data_x", "data_y"} {
			if b, p := bBase.sym(t, name).Value%32, bDataPad.sym(t, name).Value%32; b != p {
				t.Errorf("padded data-alignment commit: %s at %d mod 32, base %d", name, p, b)
			}
		}
	})
}

func TestLayoutDemo(t *testing.T) {
	needTools(t)
	r := create(t, Options{History: HistoryDemo})
	b := newBuilder(t, r)
	var jobs []buildJob
	for _, c := range r.Commits {
		jobs = append(jobs, bj(c.Hash))
	}
	var bi []*binInfo
	for _, p := range b.buildAll(t, jobs...) {
		bi = append(bi, readBin(t, p))
	}
	base, text, data, real, none := bi[0], bi[1], bi[2], bi[3], bi[4]
	checkTextShift(t, DefaultPlacement, base, text)
	checkDataShift(t, text, data)
	if data.sym(t, "text_kernel") != real.sym(t, "text_kernel") {
		t.Error("the real regression moved text_kernel")
	}
	checkIdentical(t, "no-change", real, none)
}

// TestDefaultPlacement: with no lead the inner loop starts where
// DefaultPlacement's arithmetic assumes (gcc 12.2, GNU ld, x86-64), and a
// placement of another CPU puts the loop where it says.
func TestDefaultPlacement(t *testing.T) {
	needTools(t)
	bin, err := buildTree(context.Background(), &tree{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if o, err := loopOffset(bin); err != nil || o != noLeadOffset {
		t.Errorf("with no lead the inner loop is at byte %d (%v), DefaultPlacement assumes %d: update noLeadOffset", o, err, noLeadOffset)
	}
	p := Placement{Lead: (13 - noLeadOffset + 64) % 64, Hook: 48, Fast: 13, Slow: 61}
	r := create(t, Options{History: HistoryTriage, Text: &p})
	b := newBuilder(t, r)
	bins := b.buildAll(t, bj(r.ByLabel("base").Hash), bj(r.ByLabel("text-alignment").Hash))
	checkTextShift(t, p, readBin(t, bins[0]), readBin(t, bins[1]))
}

func TestLayoutBisect(t *testing.T) {
	needTools(t)
	t.Run("bisect", func(t *testing.T) {
		checkLineLayout(t, create(t, Options{History: HistoryBisect, Commits: 12, Seed: 11}))
	})
	t.Run("watch", func(t *testing.T) {
		checkLineLayout(t, create(t, Options{History: HistoryWatch, Commits: 12, Seed: 13}))
	})
}

// checkLineLayout builds every commit of a first-parent history and checks
// that each moves what its effect says and nothing else.
func checkLineLayout(t *testing.T, r *Repo) {
	b := newBuilder(t, r)
	broken := r.Index("build-failure")
	if broken < 2 {
		t.Fatalf("the seed puts the build failure at %d; pick a seed that puts it later", broken)
	}
	// The broken commit does not build.
	_, err := buildRev(context.Background(), r.Dir, r.Commits[broken].Hash, filepath.Join(t.TempDir(), "broken"))
	if err == nil || !strings.Contains(err.Error(), "tbest") {
		t.Fatalf("building the build-failure commit: %v, want a compile error naming tbest", err)
	}
	// Every commit that builds, except the two with an effect, builds the
	// same binary as the last commit before it that built.
	var jobs []buildJob
	for _, c := range r.Commits {
		if c.Effect != EffectBuildFailure {
			jobs = append(jobs, bj(c.Hash))
		}
	}
	bins := b.buildAll(t, jobs...)
	var prev *binInfo
	i := 0
	for _, c := range r.Commits {
		if c.Effect == EffectBuildFailure {
			continue
		}
		cur := readBin(t, bins[i])
		i++
		switch c.Effect {
		case EffectTextAlignment:
			checkTextShift(t, DefaultPlacement, prev, cur)
		case EffectDataAlignment:
			checkDataShift(t, prev, cur)
		case EffectRealRegression:
			if prev.sym(t, "text_kernel") != cur.sym(t, "text_kernel") {
				t.Error("the real regression moved text_kernel")
			}
		case EffectNoChange:
			checkIdentical(t, c.Label, prev, cur)
		}
		prev = cur
	}
}

// TestPadObjectErrors checks the padding object's argument checks.
func TestPadObjectErrors(t *testing.T) {
	for _, sz := range [][2]int{{8, 0}, {0, 20}, {-16, 0}} {
		if _, err := padObject(context.Background(), os.TempDir(), t.TempDir(), sz[0], sz[1]); err == nil {
			t.Errorf("padObject(%d, %d) succeeded", sz[0], sz[1])
		}
	}
}
