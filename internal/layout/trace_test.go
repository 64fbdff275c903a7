package layout

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/profile"
	"github.com/perfbot/perfbot/internal/testutil"
)

// defconfigExports are the exported symbols of the synthetic kernel, in
// the order of their __ksymtab_gpl entries (sorted by name, as the kernel
// links them).
var defconfigExports = []string{"amd_nb_num", "boot_cpu_data", "cpu_khz", "mds_idle_clear", "mds_user_clear",
	"node_data", "pv_ops", "switch_mm_always_ibpb", "tsc_khz", "x86_spec_ctrl_base"}

// defconfigLike lays out a synthetic kernel the way x86_64 defconfig lays
// out the seed's case (docs/kernel.md, issue 11): in .bss the 16-byte
// static key mds_user_clear, 7 objects of its file after it, then the
// next file's objects from a 32-byte-aligned one (171 symbols with the
// end marker); in read-only data the
// key's 12-byte export entry in __ksymtab_gpl, the export names in
// __ksymtab_strings (no symbols), then a 32-byte-aligned table. Without
// the key (withKey false) the 7 objects move by -16 and the 171 after the
// boundary by -32; the entries after its export entry by -12, and the
// table, with the name gone too, by -32.
func defconfigLike(withKey bool) [][]placed {
	text := []piece{obj('T', "_stext", 0, 4096)}
	for i := range 10 {
		text = append(text, obj('T', fmt.Sprintf("x86_func_%d", i), uint64(48+i*40), 16))
	}
	text = append(text, obj('T', "_etext", 0, 1))

	ro := []piece{obj('R', "__start_rodata", 0, 4096)}
	for i := range 4 {
		ro = append(ro, obj('r', fmt.Sprintf("rodata_obj_%d", i), 40, 8))
	}
	ro = append(ro, obj('R', "__start___ksymtab_gpl", 0, 4))
	strs := uint64(0)
	for _, name := range defconfigExports {
		if name == "mds_user_clear" && !withKey {
			continue
		}
		ro = append(ro, obj('r', "__ksymtab_"+name, 12, 4))
		strs += uint64(len(name) + 1)
	}
	// The other exports' names: the string table of a real kernel is tens
	// of kilobytes with no symbol (46 KB in docs/kernel.md's tinyconfig).
	ro = append(ro, obj('R', "__stop___ksymtab_gpl", 0, 4), unlabelled(strs+40960))
	ro = append(ro, obj('r', "x86_cpu_desc", 40, 32))
	for i := range 8 {
		ro = append(ro, obj('r', fmt.Sprintf("rodata_tab_%d", i), uint64(24+16*(i%3)), 8))
	}

	data := []piece{obj('D', "_sdata", 0, 4096), obj('d', "data_obj_0", 64, 64), obj('D', "_edata", 0, 1)}

	bss := []piece{obj('B', "__bss_start", 0, 4096), obj('b', "bss_head", 128, 64)}
	for _, n := range []string{"mmio_stale_data_clear", "switch_mm_cond_l1d_flush", "cpu_buf_idle_clear", "mds_user_clear",
		"mds_idle_clear", "switch_mm_always_ibpb", "switch_mm_cond_ibpb", "switch_to_cond_stibp"} {
		if n != "mds_user_clear" || withKey {
			bss = append(bss, obj('B', n, 16, 16))
		}
	}
	bss = append(bss, obj('B', "x86_spec_ctrl_base", 8, 8), obj('b', "srbds_off", 1, 1), obj('b', "spectre_v2_bad_module", 1, 1))
	bss = append(bss, obj('b', "tme_activate_cpu0", 8, 32))
	sizes := []uint64{8, 24, 40, 4, 56, 16, 8, 120}
	for i := range 169 {
		bss = append(bss, obj('b', fmt.Sprintf("bss_obj_%d", i), sizes[i%len(sizes)], 8))
	}
	bss = append(bss, obj('B', "__bss_stop", 0, 8))
	return [][]placed{
		link(0xffffffff81000000, text...), link(0xffffffff82000000, ro...),
		link(0xffffffff82400000, data...), link(0xffffffff82600000, bss...),
	}
}

// TestTraceDefconfigStaticKey: the measured defconfig pattern. The -32
// runs carry the key's removal (through its export name for read-only
// data), the key's removal and its export entry are one root change,
// and that change ranks first with the top suspect.
func TestTraceDefconfigStaticKey(t *testing.T) {
	a, b := defconfigLike(true), defconfigLike(false)
	// The layout is the pattern, or the test proves nothing.
	for _, c := range []struct {
		name  string
		shift int64
	}{{"mds_idle_clear", -16}, {"spectre_v2_bad_module", -16}, {"tme_activate_cpu0", -32}, {"bss_obj_168", -32},
		{"__ksymtab_node_data", -12}, {"__stop___ksymtab_gpl", -12}, {"x86_cpu_desc", -32}, {"rodata_tab_7", -32}} {
		if got := int64(addrOf(t, c.name, b...) - addrOf(t, c.name, a...)); got != c.shift {
			t.Fatalf("synthetic layout: %s moves %+d, want %+d", c.name, got, c.shift)
		}
	}
	for _, sizes := range []bool{false, true} {
		name := "System.map"
		if sizes {
			name = "nm -S"
		}
		t.Run(name, func(t *testing.T) {
			x := mustOpen(t, writeTemp(t, "a.map", []byte(symbolMap(sizes, a...))))
			y := mustOpen(t, writeTemp(t, "b.map", []byte(symbolMap(sizes, b...))))
			d := Diff(x, y, DiffOptions{})
			checkDefconfigTrace(t, d)
		})
	}
}

func checkDefconfigTrace(t *testing.T, d *DiffResult) {
	t.Helper()
	key, keyRun := runOf(t, d, "mds_idle_clear")
	entry, entryRun := runOf(t, d, "__ksymtab_node_data")
	if key.Root != keyRun || key.Carried || !hasCause(key, Removed, "mds_user_clear") || key.Count != 7 {
		t.Errorf("the .bss run after the key is not the root of its shift:%s", describeRuns(d))
	}
	if entry.Root != entryRun || !hasCause(entry, Removed, "__ksymtab_mds_user_clear") {
		t.Errorf("the run after the export entry is not the root of its shift:%s", describeRuns(d))
	}
	// The realignment runs name the root.
	bss, _ := runOf(t, d, "tme_activate_cpu0")
	if !bss.Carried || bss.Root != keyRun || bss.From != keyRun || bss.Align != 32 || bss.Count != 171 {
		t.Errorf("the .bss -32 run is not carried from the key's run at a 32-byte boundary:%s", describeRuns(d))
	}
	for _, c := range bss.Causes {
		if c.Kind != Realigned {
			t.Errorf("the .bss -32 run's cause %v: want only padding", c)
		}
	}
	ro, _ := runOf(t, d, "x86_cpu_desc")
	if !ro.Carried || ro.Root != entryRun || len(ro.Tables) != 1 || !ro.Tables[0].Estimated ||
		ro.Tables[0].Bytes != -int64(len("mds_user_clear")+1) || ro.Tables[0].Table != "__ksymtab_strings" {
		t.Errorf("the read-only -32 run is not carried from the export entry through its name:%s", describeRuns(d))
	}
	// One root change, first, with all four moved runs and every moved
	// symbol.
	if len(d.RootChanges) != 1 {
		t.Fatalf("%d root changes, want 1:%s", len(d.RootChanges), describeRuns(d))
	}
	rc := &d.RootChanges[0]
	text := rc.String()
	for _, want := range []string{"removed mds_user_clear (16 bytes)", "removed __ksymtab_mds_user_clear (12 bytes)", "the name of mds_user_clear in __ksymtab_strings (about -15 bytes)"} {
		if !strings.Contains(text, want) {
			t.Errorf("root change %q lacks %q", text, want)
		}
	}
	moved := 0
	for _, i := range rc.Runs {
		if d.Runs[i].Shift != 0 {
			moved++
		}
	}
	if moved != 4 || rc.Moved != d.Stats.Moved {
		t.Errorf("root change holds runs %v and %d moved symbols, want 4 moved runs and all %d:%s", rc.Runs, rc.Moved, d.Stats.Moved, describeRuns(d))
	}
	// The page-aligned .data absorbs the read-only data's -32.
	if data, _ := runOf(t, d, "_sdata"); data.Shift != 0 || !data.Carried || data.RootChange != 0 {
		t.Errorf("the .data run did not absorb the shift:%s", describeRuns(d))
	}
	for i := range d.Runs {
		if r := &d.Runs[i]; r.Shift != 0 && r.RootChange != 0 {
			t.Errorf("run from %s (%+d) is not in the root change", r.First.Name(), r.Shift)
		}
	}
	// The top suspect is the root change's first victim.
	if len(rc.Victims) == 0 || d.Ranked[0] != rc.Victims[0] {
		t.Errorf("top suspect %v, root change's first victim %v", rankedNames(d, 3), rc.Victims[:min(1, len(rc.Victims))])
	}
	if d.RootOf(d.Ranked[0]) != rc {
		t.Errorf("RootOf(top suspect) is not the root change")
	}
	checkTraceInvariants(t, d)
}

// TestDefconfigLikeMaps keeps testdata/defconfig-like-{A,B}.map, which
// the report's tests read, the maps defconfigLike makes (go test -update
// rewrites them).
func TestDefconfigLikeMaps(t *testing.T) {
	testutil.Golden(t, filepath.Join("testdata", "defconfig-like-A.map"), []byte(symbolMap(false, defconfigLike(true)...)))
	testutil.Golden(t, filepath.Join("testdata", "defconfig-like-B.map"), []byte(symbolMap(false, defconfigLike(false)...)))
}

// cLike lays out the .text of a C program: f1 shrinks by 16 bytes in B,
// and the padding before the 64-byte-aligned hot_a absorbs the shift; g1
// grows by 8, the 16-byte-aligned g2 moves +16, and the 32-byte-aligned
// hot_b doubles that to +32.
func cLike(b bool) []byte {
	f1, g1 := uint64(80), uint64(32)
	if b {
		f1, g1 = 64, 40
	}
	fn := func(name string, size, align uint64) piece { return obj('T', name, size, align) }
	return genELF(0x401000, []gsec{{name: ".text", flags: elf.SHF_EXECINSTR, align: 64, pieces: []piece{
		fn("f0", 40, 16), fn("f1", f1, 16), fn("f2", 48, 16), fn("f3", 40, 16), fn("hot_a", 100, 64),
		fn("g0", 40, 16), fn("g1", g1, 16), fn("g2", 40, 16), fn("g3", 40, 16), fn("hot_b", 90, 32),
		fn("h0", 40, 16), fn("h1", 40, 16),
	}}})
}

// TestTraceCAbsorbAndDouble: padding absorbs one root's shift and doubles
// another's; each realignment run names its own root, and with a profile
// the root change holding the hottest moved function ranks first.
func TestTraceCAbsorbAndDouble(t *testing.T) {
	x := mustOpen(t, writeTemp(t, "a", cLike(false)))
	y := mustOpen(t, writeTemp(t, "b", cLike(true)))
	hot, err := profile.Read(writeTemp(t, "hot.folded", []byte("main;h1 60\nmain;f2 30\nmain;g0 10\n")))
	if err != nil {
		t.Fatal(err)
	}
	d := Diff(x, y, DiffOptions{Hot: hot})
	for name, shift := range map[string]int64{"f2": -16, "f3": -16, "hot_a": 0, "g2": 16, "g3": 16, "hot_b": 32, "h1": 32} {
		if c := changeOf(t, d, name); c.Shift() != shift {
			t.Fatalf("synthetic layout: %s moves %+d, want %+d:%s", name, c.Shift(), shift, describeRuns(d))
		}
	}
	shrink, shrinkRun := runOf(t, d, "f2")
	grow, growRun := runOf(t, d, "g2")
	if shrink.Root != shrinkRun || !hasCause(shrink, Resized, "f1") || grow.Root != growRun || !hasCause(grow, Resized, "g1") {
		t.Errorf("the runs after f1 and g1 are not roots:%s", describeRuns(d))
	}
	absorbed, _ := runOf(t, d, "hot_a")
	if !absorbed.Carried || absorbed.Root != shrinkRun || absorbed.Shift != 0 || absorbed.Align != 32 {
		t.Errorf("the run from hot_a does not name f1's shrink as the shift it absorbed:%s", describeRuns(d))
	}
	doubled, _ := runOf(t, d, "hot_b")
	if !doubled.Carried || doubled.Root != growRun || doubled.From != growRun || doubled.Align != 32 || len(doubled.Via) != 0 {
		t.Errorf("the run from hot_b does not name g1's growth as the shift it doubled:%s", describeRuns(d))
	}
	if len(d.RootChanges) != 2 {
		t.Fatalf("%d root changes, want 2:%s", len(d.RootChanges), describeRuns(d))
	}
	top := &d.RootChanges[0]
	if !strings.Contains(top.String(), "g1 resized (+8 bytes)") || top.Moved != 5 || len(top.Runs) != 2 ||
		d.Ranked[0].Name() != "h1" || top.Victims[0] != d.Ranked[0] {
		t.Errorf("top root change %q (%d moved, runs %v), top suspect %v:%s", top.String(), top.Moved, top.Runs, rankedNames(d, 3), describeRuns(d))
	}
	// The absorbed run belongs to f1's change and moved nothing.
	if other := &d.RootChanges[1]; other.Moved != 2 || len(other.Runs) != 2 || d.Runs[other.Runs[1]].Shift != 0 {
		t.Errorf("second root change %q: %d moved, runs %v", other.String(), other.Moved, other.Runs)
	}
	checkTraceInvariants(t, d)
}

// checkTraceInvariants checks what every traced diff must satisfy.
func checkTraceInvariants(t testing.TB, d *DiffResult) {
	t.Helper()
	moved := 0
	for i := range d.Runs {
		r := &d.Runs[i]
		switch {
		case r.Shift != 0 && (r.Root < 0 || r.RootChange < 0):
			t.Errorf("run %d moved %+d and has no root", i, r.Shift)
		case r.Root >= 0 && d.Runs[r.Root].Root != r.Root:
			t.Errorf("run %d's root %d is not a root", i, r.Root)
		case r.Carried && (r.Root == i || r.From < 0 || d.Runs[r.From].Root != r.Root):
			t.Errorf("run %d carried from %d with root %d", i, r.From, r.Root)
		case r.Root == i && r.Carried:
			t.Errorf("run %d is its own root and carried", i)
		case (r.Root >= 0) != (r.RootChange >= 0):
			t.Errorf("run %d: root %d, root change %d", i, r.Root, r.RootChange)
		}
		for _, v := range r.Via {
			if !d.Runs[v].Carried || d.Runs[v].Root != r.Root {
				t.Errorf("run %d goes via run %d, which is not carried from the same root", i, v)
			}
		}
	}
	for k := range d.RootChanges {
		rc := &d.RootChanges[k]
		moved += rc.Moved
		for _, i := range rc.Runs {
			if d.Runs[i].RootChange != k {
				t.Errorf("root change %d lists run %d, which names root change %d", k, i, d.Runs[i].RootChange)
			}
		}
	}
	if moved != d.Stats.Moved {
		t.Errorf("root changes moved %d symbols, the diff %d", moved, d.Stats.Moved)
	}
	// Ranked by what they explain; an untraced one never above a traced
	// one that moved more; an untraced root run says why.
	for k := range d.RootChanges {
		rc := &d.RootChanges[k]
		if len(rc.Victims) > 0 && d.RootOf(rc.Victims[0]) != rc {
			t.Errorf("root change %d's first victim %s belongs to another", k+1, rc.Victims[0].Name())
		}
		if !rc.Traced {
			for _, i := range rc.Roots {
				if r := &d.Runs[i]; r.Shift != 0 && r.Break == "" && len(r.Tables) == 0 {
					t.Errorf("root change %d (%s) is untraced and its run from %s does not say why", k+1, rc, r.First.Name())
				}
			}
			for j := k + 1; j < len(d.RootChanges); j++ {
				if o := &d.RootChanges[j]; o.Traced && o.Moved > rc.Moved {
					t.Errorf("untraced root change %d (%s, %d moved) ranks above traced %d (%s, %d moved)", k+1, rc, rc.Moved, j+1, o, o.Moved)
				}
			}
		}
		if k > 0 && d.Ranking == ByAlignment && rc.Traced == d.RootChanges[k-1].Traced && rc.Moved > d.RootChanges[k-1].Moved {
			t.Errorf("root change %d moved %d, more than %d before it (%d)", k+1, rc.Moved, k, d.RootChanges[k-1].Moved)
		}
	}
}

// vmlinuxLikeTables builds a kernel-like ELF file as in docs/kernel.md's
// tinyconfig vmlinux: its export tables are sections with no typed
// symbols, so an export that goes shows only as __ksymtab_gpl (12 bytes
// an entry) and __ksymtab_strings (the name) shrinking, which moves
// __param.
func vmlinuxLikeTables(withKey bool) []byte {
	var strs []byte
	n := 0
	for _, name := range defconfigExports {
		if name == "mds_user_clear" && !withKey {
			continue
		}
		strs = append(append(strs, name...), 0)
		n++
	}
	var params, bss []piece
	for i := range 6 {
		params = append(params, obj('r', fmt.Sprintf("__param_%d", i), 40, 8))
	}
	for _, name := range []string{"cpu_buf_idle_clear", "mds_user_clear", "mds_idle_clear", "switch_mm_always_ibpb"} {
		if name != "mds_user_clear" || withKey {
			bss = append(bss, obj('B', name, 16, 16))
		}
	}
	bss = append(bss, obj('b', "srbds_off", 1, 1), obj('b', "tme_activate_cpu0", 8, 32), obj('b', "bld_ratelimit", 24, 8))
	return genELF(0xffffffff81000000, []gsec{
		{name: ".text", flags: elf.SHF_EXECINSTR, align: 4096, pieces: []piece{obj('T', "start_kernel", 200, 16)}},
		{name: ".rodata", align: 64, pieces: []piece{obj('r', "rodata_obj", 100, 32)}},
		{name: "__ksymtab_gpl", align: 4, data: make([]byte, 12*n)},
		{name: "__ksymtab_strings", align: 1, data: strs},
		{name: "__param", align: 8, pieces: params},
		{name: ".data", flags: elf.SHF_WRITE, align: 4096, pieces: []piece{obj('D', "data_obj", 64, 64)}},
		{name: ".bss", flags: elf.SHF_WRITE, nobits: true, align: 4096, pieces: bss},
	})
}

// TestTraceKernelELFTables: in an ELF kernel the export tables have no
// symbols; the __param run is traced to the tables that changed size,
// and, since __ksymtab_strings lost the removed key's name, that is the
// key's root change.
func TestTraceKernelELFTables(t *testing.T) {
	x := mustOpen(t, writeTemp(t, "a", vmlinuxLikeTables(true)))
	y := mustOpen(t, writeTemp(t, "b", vmlinuxLikeTables(false)))
	d := Diff(x, y, DiffOptions{})
	param, paramRun := runOf(t, d, "__param_0")
	if param.Shift == 0 || param.Root != paramRun || len(param.Tables) != 2 {
		t.Fatalf("the __param run is not a root with two tables:%s", describeRuns(d))
	}
	gpl, strs := param.Tables[0], param.Tables[1]
	if gpl.Table != "__ksymtab_gpl" || gpl.Bytes != -12 || strs.Table != "__ksymtab_strings" || strs.Bytes != -15 ||
		strs.Symbol == nil || strs.Symbol.Name != "mds_user_clear" || strs.Estimated {
		t.Errorf("tables %v", param.Tables)
	}
	if len(d.RootChanges) != 1 {
		t.Fatalf("%d root changes, want 1 (the key and its export):%s", len(d.RootChanges), describeRuns(d))
	}
	rc := &d.RootChanges[0]
	want := "removed mds_user_clear (16 bytes), table __ksymtab_gpl resized (-12 bytes), table __ksymtab_strings resized (-15 bytes, with the export of mds_user_clear)"
	if rc.String() != want {
		t.Errorf("root change %q, want %q", rc.String(), want)
	}
	_, bssRun := runOf(t, d, "mds_idle_clear")
	if !slices.Contains(rc.Roots, bssRun) || !slices.Contains(rc.Roots, paramRun) || rc.Moved != d.Stats.Moved {
		t.Errorf("root change: roots %v, %d moved:%s", rc.Roots, rc.Moved, describeRuns(d))
	}
	checkTraceInvariants(t, d)
}
