package layout

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// TestSyntheticELF checks the test ELF writer against the reader on a
// small build pair, so the benchmark below measures real work.
func TestSyntheticELF(t *testing.T) {
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := vmlinuxLike(500, 200, "a").writeFile(pa); err != nil {
		t.Fatal(err)
	}
	if err := vmlinuxLike(500, 200, "b").writeFile(pb); err != nil {
		t.Fatal(err)
	}
	a, b := mustOpen(t, pa), mustOpen(t, pb)
	if len(a.Symbols) != 701 || len(b.Symbols) != 701 {
		t.Fatalf("%d and %d symbols, want 701 each", len(a.Symbols), len(b.Symbols))
	}
	d := Diff(a, b, DiffOptions{})
	if d.Stats.Added != 1 || d.Stats.Removed != 1 || d.Stats.Matched != 700 {
		t.Errorf("added %v removed %v matched %d", names(d.Added), names(d.Removed), d.Stats.Matched)
	}
	// Every "helper" and "counter" pairs with the one of its own file.
	for i := range d.Changes {
		c := &d.Changes[i]
		if c.A.File != c.B.File || c.A.Size != c.B.Size {
			t.Fatalf("%s (%s, %d bytes) matched %s (%s, %d bytes)", c.A.Name, c.A.File, c.A.Size, c.B.Name, c.B.File, c.B.Size)
		}
	}
	x := changeOf(t, d, "bss_3")
	if x.Shift() != -16 || !hasCause(&d.Runs[x.Run], Removed, "mds_user_clear") {
		t.Errorf("bss_3 shift %d causes %v", x.Shift(), d.Runs[x.Run].Causes)
	}
	f := changeOf(t, d, "func_0")
	if f.Shift() != 48 || !hasCause(&d.Runs[f.Run], Added, "new_function") {
		t.Errorf("func_0 shift %d causes %v", f.Shift(), d.Runs[f.Run].Causes)
	}
}

// benchPair writes (once per machine, cached in the temp dir) two
// vmlinux-sized synthetic builds: 300,000 functions in about 230 MB of
// .text, 60,000 objects, files of about 250 MB with the code as holes.
func benchPair(b *testing.B, variantB string) (string, string) {
	dir := filepath.Join(os.TempDir(), "perfbot-layout-bench-v3")
	pa, pb := filepath.Join(dir, "vmlinux-a"), filepath.Join(dir, "vmlinux-"+variantB)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct{ path, variant string }{{pa, "a"}, {pb, variantB}} {
		if _, err := os.Stat(v.path); err == nil {
			continue
		}
		tmp := v.path + ".tmp"
		if err := vmlinuxLike(300000, 60000, v.variant).writeFile(tmp); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, v.path); err != nil {
			b.Fatal(err)
		}
	}
	return pa, pb
}

// BenchmarkDiffVmlinuxSize opens two vmlinux-sized builds and diffs them
// (all symbols but a few move). It reports the file size, the live heap
// held by the two layouts and the result, and the process's peak RSS.
func BenchmarkDiffVmlinuxSize(b *testing.B) { benchDiff(b, "b") }

// BenchmarkDiffVmlinuxShuffled diffs a vmlinux-sized build against one
// with its functions in another order: the worst case for finding causes.
func BenchmarkDiffVmlinuxShuffled(b *testing.B) { benchDiff(b, "shuffled") }

func benchDiff(b *testing.B, variantB string) {
	pa, pb := benchPair(b, variantB)
	fi, err := os.Stat(pa)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var d *DiffResult
	for b.Loop() {
		a, err := Open(pa)
		if err != nil {
			b.Fatal(err)
		}
		bb, err := Open(pb)
		if err != nil {
			b.Fatal(err)
		}
		d = Diff(a, bb, DiffOptions{})
	}
	b.StopTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(fi.Size())/(1<<20), "file-MB")
	b.ReportMetric(float64(len(d.A.Symbols)), "symbols")
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MB")
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MB") // Linux: KiB
	}
	if d.Stats.Matched < 350000 {
		b.Fatal(fmt.Sprintf("matched only %d", d.Stats.Matched))
	}
	runtime.KeepAlive(d)
}
