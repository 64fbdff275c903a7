package layout

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestKernelSystemMapStaticKey diffs excerpts of the System.map files of
// two real Linux 6.1 tinyconfig builds (docs/kernel.md): A defines one more
// zero-initialised static key in arch/x86/kernel/cpu/bugs.c, as the
// kernel's code did before the seed's commit removed mds_user_clear. The
// key's EXPORT_SYMBOL_GPL also shrinks the export string table, so the
// __param table moves and the labels __stop___param and __start___ex_table,
// at one address in A, part in B.
func TestKernelSystemMapStaticKey(t *testing.T) {
	a := mustOpen(t, filepath.Join("testdata", "linux-6.1-tiny-A.map"))
	b := mustOpen(t, filepath.Join("testdata", "linux-6.1-tiny-B.map"))
	d := Diff(a, b, DiffOptions{})

	// The labels that part are neither added nor a cause.
	if len(d.Added) != 0 {
		t.Errorf("added %s, want nothing", d.Added[0].Name)
	}
	if len(d.Removed) != 1 || d.Removed[0].Name != "test_static_key" {
		t.Errorf("removed %v, want only test_static_key", names(d.Removed))
	}
	for i := range d.Runs {
		if hasCause(&d.Runs[i], Added, "") {
			t.Errorf("run from %s blames an added symbol: %v", d.Runs[i].First.Name(), d.Runs[i].Causes)
		}
	}

	// The .bss run after the key names it.
	c := changeOf(t, d, "switch_mm_always_ibpb")
	r := &d.Runs[c.Run]
	if c.Shift() != -16 || r.First != c || !hasCause(r, Removed, "test_static_key") || r.Prev.Name != "cpu_buf_idle_clear" {
		t.Errorf("switch_mm_always_ibpb shift %d, run from %s after %v, causes %v", c.Shift(), r.First.Name(), r.Prev, r.Causes)
	}

	// The padding after srbds_off absorbs the key's shift at the
	// 32-byte-aligned tme_activate_cpu0.1: that run names the key's run,
	// and the "resize" of srbds_off (its size is guessed from the next
	// address) is padding.
	tme := changeOf(t, d, "tme_activate_cpu0.1")
	if ar := &d.Runs[tme.Run]; tme.Shift() != 0 || !ar.Carried || ar.Root != c.Run || ar.Align != 32 || hasCause(ar, Resized, "") {
		t.Errorf("run from tme_activate_cpu0.1: shift %d, carried %v, root %d (want %d), align %d, causes %v",
			tme.Shift(), ar.Carried, ar.Root, c.Run, ar.Align, ar.Causes)
	}
	// .notes is 16 bytes nearer, not 24 as __param: __ex_table between them
	// (its start a label A has under another name) is 16-byte aligned.
	notes := changeOf(t, d, "__start_notes")
	param := changeOf(t, d, "__start___param")
	if nr := &d.Runs[notes.Run]; !nr.Carried || nr.Root != param.Run || nr.Align != 16 {
		t.Errorf("run from __start_notes: carried %v, root %d (want %d), align %d", nr.Carried, nr.Root, param.Run, nr.Align)
	}
	// Two root changes: the key's removal (traced: it names the key), and
	// the __param table's move, which the excerpt cannot trace (it starts
	// at __param: nothing before it) and says so. The untraced one moved
	// more (24 symbols against 5), so it may rank first; the key's change
	// has the top suspect as its first victim.
	if len(d.RootChanges) != 2 {
		t.Fatalf("root changes: %s", describeRuns(d))
	}
	key, pm := &d.RootChanges[1], &d.RootChanges[0]
	if key.Roots[0] != c.Run || key.Victims[0] != c || !key.Traced || key.Moved != 5 {
		t.Errorf("key's root change: %s", describeRuns(d))
	}
	if pm.Traced || pm.Moved != 24 || !strings.Contains(d.Runs[pm.Roots[0]].Break, "nothing lies before") {
		t.Errorf("__param's root change: traced %v, moved %d, break %q", pm.Traced, pm.Moved, d.Runs[pm.Roots[0]].Break)
	}
	checkTraceInvariants(t, d)

	// The boot-time __param entries that now straddle a line rank after
	// the static keys, and a note says why.
	p := changeOf(t, d, "__param_crash_kexec_post_notifiers")
	if !p.B.Straddles() || p.A.Straddles() {
		t.Fatalf("__param_crash_kexec_post_notifiers straddles %v -> %v; the excerpt changed", p.A.Straddles(), p.B.Straddles())
	}
	if len(d.Ranked) == 0 || d.Ranked[0] != c {
		t.Errorf("ranked first: %v, want switch_mm_always_ibpb", rankedNames(d, 3))
	}
	if p.Weight != WeightPage {
		t.Errorf("__param entry weight %v, want %v", p.Weight, WeightPage)
	}
	if !strings.Contains(strings.Join(d.Notes, "\n"), "kernel tables") {
		t.Errorf("notes %q", d.Notes)
	}

	// The padding proposed for the top change is the seed's fix: 16 bytes
	// of .bss before switch_mm_always_ibpb.
	pad, err := ProposePadding(d, "")
	if err != nil {
		t.Fatal(err)
	}
	if pad.Symbol != "switch_mm_always_ibpb" || pad.Bytes != 16 || pad.Section != ".bss" || pad.After.Name != "cpu_buf_idle_clear" {
		t.Errorf("padding %d bytes in %s for %s after %v", pad.Bytes, pad.Section, pad.Symbol, pad.After)
	}
}

// TestLabelSplitAndMerge: an empty label that shares an address with
// another in one build only is found in both builds, in either direction.
func TestLabelSplitAndMerge(t *testing.T) {
	one := "0000000000401000 T f\n0000000000401040 T g\n0000000000401080 T __stop_x\n0000000000401080 T __start_y\n00000000004010c0 T h\n"
	two := "0000000000401000 T f\n0000000000401040 T g\n0000000000401070 T __stop_x\n0000000000401080 T __start_y\n00000000004010c0 T h\n"
	x := mustOpen(t, writeTemp(t, "one.map", []byte(one)))
	y := mustOpen(t, writeTemp(t, "two.map", []byte(two)))
	for _, d := range []*DiffResult{Diff(x, y, DiffOptions{}), Diff(y, x, DiffOptions{})} {
		if len(d.Added) != 0 || len(d.Removed) != 0 {
			t.Errorf("added %v, removed %v", names(d.Added), names(d.Removed))
		}
		for i := range d.Runs {
			for _, cs := range d.Runs[i].Causes {
				if cs.Kind == Added || cs.Kind == Removed || cs.Kind == Reordered {
					t.Errorf("run from %s: cause %v", d.Runs[i].First.Name(), cs)
				}
			}
		}
	}
	// A label really gone is still removed.
	three := strings.Replace(two, "0000000000401080 T __start_y\n", "", 1)
	d := Diff(y, mustOpen(t, writeTemp(t, "three.map", []byte(three))), DiffOptions{})
	if len(d.Removed) != 1 || d.Removed[0].Name != "__start_y" {
		t.Errorf("removed %v, want __start_y", names(d.Removed))
	}
}

func rankedNames(d *DiffResult, n int) []string {
	var out []string
	for i, c := range d.Ranked {
		if i == n {
			break
		}
		out = append(out, c.Name())
	}
	return out
}
