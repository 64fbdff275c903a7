package layout

import (
	"debug/elf"
	"strings"
	"testing"
)

// kallsymsLike builds a kernel-like ELF file whose .rodata ends with
// tables written in assembler (labels, no sized symbols), as a kernel's
// symbol table is: when a symbol goes, the offsets and names tables
// shrink, and a 32-byte-aligned object after them moves by -32.
func kallsymsLike(withKey bool) []byte {
	offsets, names := uint64(4*100), uint64(900)
	bss := []piece{obj('B', "cpu_buf_idle_clear", 16, 16)}
	if withKey {
		offsets, names = offsets+8, names+13
		bss = append(bss, obj('B', "mds_user_clear", 16, 16))
	}
	for _, n := range []string{"switch_mm_always_ibpb", "switch_mm_cond_ibpb", "switch_to_cond_stibp"} {
		bss = append(bss, obj('B', n, 16, 16))
	}
	return genELF(0xffffffff81000000, []gsec{
		{name: ".text", flags: elf.SHF_EXECINSTR, align: 4096, pieces: []piece{obj('T', "start_kernel", 200, 16)}},
		{name: ".rodata", align: 64, pieces: []piece{
			obj('r', "linux_banner", 100, 32),
			obj('L', "tab_offsets", 0, 8), unlabelled(offsets),
			obj('L', "tab_names", 0, 8), unlabelled(names),
			obj('L', "tab_markers", 0, 8), unlabelled(64),
			unlabelled(20), // strings
			obj('r', "jumptable", 2048, 32), obj('r', "after_jumptable", 24, 8),
		}},
		{name: ".bss", flags: elf.SHF_WRITE, nobits: true, align: 4096, pieces: bss},
	})
}

// TestTraceLabelTables: the .rodata run after tables that only labels
// bracket is traced to the tables that changed size (their labels are
// points of known shift), not left as "alignment padding changed".
func TestTraceLabelTables(t *testing.T) {
	x := mustOpen(t, writeTemp(t, "a", kallsymsLike(true)))
	y := mustOpen(t, writeTemp(t, "b", kallsymsLike(false)))
	if len(x.Labels) != 3 || x.Labels[0].Name != "tab_offsets" {
		t.Fatalf("labels %v, want the three tables' labels", x.Labels)
	}
	d := Diff(x, y, DiffOptions{})
	jt, jtRun := runOf(t, d, "jumptable")
	if jt.Shift != -32 || jt.Root != jtRun || len(jt.Tables) != 2 {
		t.Fatalf("the jumptable run is not a -32 root with two tables:%s", describeRuns(d))
	}
	off, nm := jt.Tables[0], jt.Tables[1]
	if off.Table != "tab_offsets" || off.Until != "tab_names" || off.Bytes != -8 || nm.Table != "tab_names" || nm.Until != "tab_markers" || nm.Bytes != -16 {
		t.Errorf("tables %+v", jt.Tables)
	}
	if want := "table tab_offsets resized (-8 bytes, up to label tab_names)"; off.String() != want {
		t.Errorf("%q, want %q", off.String(), want)
	}
	rc := d.RootOf(jt.First)
	if rc == nil || !rc.Traced || strings.Contains(rc.String(), "padding") {
		t.Errorf("root change of the jumptable run: %v", rc)
	}
	// The key's removal moved more, so it ranks first.
	if !causeNamed(d.RootChanges[0].Causes, Removed, "mds_user_clear") {
		t.Errorf("first root change %s", &d.RootChanges[0])
	}
	checkTraceInvariants(t, d)
}
