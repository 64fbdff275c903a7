package layout

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// kallsymsTokens are the multi-letter tokens of the synthetic symbol
// tables, at token numbers 1, 2, ...; every other token number is its
// own letter, as scripts/kallsyms leaves unused ones.
var kallsymsTokens = []string{"__ksymtab_", "mds_", "clear", "switch_"}

// encodeKallsyms writes a symbol table as scripts/kallsyms (Linux 6.1)
// does: the names (a length byte, then token numbers, the first letter
// the type), the token table (256 NUL-terminated strings) and its index.
func encodeKallsyms(names []string) (enc, table, index []byte) {
	var tok [256]string
	for k := range tok {
		if k >= 0x20 && k < 0x7f {
			tok[k] = string(rune(k))
		}
	}
	for k, s := range kallsymsTokens {
		tok[k+1] = s
	}
	for _, name := range names {
		var e []byte
		for rest := name; rest != ""; {
			k := slices.IndexFunc(kallsymsTokens, func(s string) bool { return strings.HasPrefix(rest, s) })
			if k >= 0 {
				e = append(e, byte(k+1))
				rest = rest[len(kallsymsTokens[k]):]
			} else {
				e = append(e, rest[0])
				rest = rest[1:]
			}
		}
		enc = append(append(enc, byte(len(e))), e...)
	}
	index = make([]byte, 2*256)
	for k, s := range tok {
		binary.LittleEndian.PutUint16(index[2*k:], uint16(len(table)))
		table = append(append(table, s...), 0)
	}
	return enc, table, index
}

// kallsymsELF builds a kernel-like ELF file whose .rodata ends with a
// real (if small) kallsyms symbol table, bracketed by its labels as in
// vmlinux, and a 32-byte-aligned jump table after it; the base has the
// key mds_user_clear and its export entry, which the table names too.
func kallsymsELF(withKey bool) []byte {
	syms := []string{"Tstart_kernel", "Rlinux_banner", "Bcpu_buf_idle_clear", "Bmds_user_clear", "R__ksymtab_mds_user_clear",
		"Bswitch_mm_always_ibpb", "Bswitch_mm_cond_ibpb", "Bswitch_to_cond_stibp", "rjumptable", "rafter_jumptable"}
	if !withKey {
		syms = slices.DeleteFunc(syms, func(s string) bool { return strings.Contains(s, "mds_user_clear") })
	}
	enc, table, index := encodeKallsyms(syms)
	var num [4]byte
	binary.LittleEndian.PutUint32(num[:], uint32(len(syms)))
	bss := []piece{obj('B', "cpu_buf_idle_clear", 16, 16)}
	if withKey {
		bss = append(bss, obj('B', "mds_user_clear", 16, 16))
	}
	for _, n := range []string{"switch_mm_always_ibpb", "switch_mm_cond_ibpb", "switch_to_cond_stibp"} {
		bss = append(bss, obj('B', n, 16, 16))
	}
	return genELF(0xffffffff81000000, []gsec{
		{name: ".text", flags: elf.SHF_EXECINSTR, align: 4096, pieces: []piece{obj('T', "start_kernel", 200, 16)}},
		{name: ".rodata", align: 64, pieces: []piece{
			obj('r', "linux_banner", 100, 32),
			obj('L', "kallsyms_offsets", 0, 8), unlabelled(4 * uint64(len(syms))),
			obj('L', "kallsyms_relative_base", 0, 8), unlabelled(8),
			obj('L', "kallsyms_num_syms", 0, 8), contents(num[:]),
			obj('L', "kallsyms_names", 0, 8), contents(enc),
			obj('L', "kallsyms_markers", 0, 8), unlabelled(4),
			obj('L', "kallsyms_seqs_of_names", 0, 8), unlabelled(3 * uint64(len(syms))),
			obj('L', "kallsyms_token_table", 0, 8), contents(table),
			obj('L', "kallsyms_token_index", 0, 8), contents(index),
			obj('r', "jumptable", 2048, 32), obj('r', "after_jumptable", 24, 8),
		}},
		{name: ".bss", flags: elf.SHF_WRITE, nobits: true, align: 4096, pieces: bss},
	})
}

// TestKallsymsNames decodes the synthetic table back to its names.
func TestKallsymsNames(t *testing.T) {
	b := mustOpen(t, writeTemp(t, "a", kallsymsELF(true)))
	got, err := b.kallsymsNames()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"start_kernel": 1, "linux_banner": 1, "cpu_buf_idle_clear": 1, "mds_user_clear": 1, "__ksymtab_mds_user_clear": 1,
		"switch_mm_always_ibpb": 1, "switch_mm_cond_ibpb": 1, "switch_to_cond_stibp": 1, "jumptable": 1, "after_jumptable": 1}
	if len(got) != len(want) {
		t.Fatalf("decoded %v, want %v", got, want)
	}
	for s, n := range want {
		if got[s] != n {
			t.Errorf("%s: %d times, want %d (decoded %v)", s, got[s], n, got)
		}
	}
	// A table cut short is an error, not a wrong list.
	bad := kallsymsELF(true)
	i := bytes.Index(bad, []byte("\x0dTstart_kernel"))
	if i < 0 {
		t.Fatal("no encoded name start_kernel in the file")
	}
	bad[i] = 0x7f // a length past kallsyms_markers
	if _, err := mustOpen(t, writeTemp(t, "bad", bad)).kallsymsNames(); err == nil || !strings.Contains(err.Error(), "kallsyms_markers") {
		t.Errorf("a length past the table: error %v, want one naming kallsyms_markers", err)
	}
}

// TestTraceKallsymsNames: the .rodata run after the kernel's symbol table
// is traced to its tables, and, since the table lost the removed key's
// names, it is part of the key's root change, whose text lists them.
func TestTraceKallsymsNames(t *testing.T) {
	x := mustOpen(t, writeTemp(t, "a", kallsymsELF(true)))
	y := mustOpen(t, writeTemp(t, "b", kallsymsELF(false)))
	d := Diff(x, y, DiffOptions{})
	jt, jtRun := runOf(t, d, "jumptable")
	if jt.Shift == 0 || jt.Root != jtRun || len(jt.Tables) == 0 {
		t.Fatalf("the jumptable run is not a root with tables:%s", describeRuns(d))
	}
	first := jt.Tables[0]
	if want := []string{"__ksymtab_mds_user_clear", "mds_user_clear"}; !slices.Equal(first.Names, want) {
		t.Errorf("names %v, want %v", first.Names, want)
	}
	for _, c := range jt.Tables {
		if c.Symbol == nil || c.Symbol.Name != "mds_user_clear" {
			t.Errorf("table cause %q: symbol %v, want mds_user_clear", c, c.Symbol)
		}
	}
	if want := "the symbol table lost 2 names: __ksymtab_mds_user_clear, mds_user_clear"; !strings.Contains(first.String(), want) {
		t.Errorf("%q, want it to say %q", first.String(), want)
	}
	if len(d.RootChanges) != 1 {
		t.Fatalf("%d root changes, want 1 (the key, its export and its names):%s", len(d.RootChanges), describeRuns(d))
	}
	rc := &d.RootChanges[0]
	_, bssRun := runOf(t, d, "switch_mm_always_ibpb")
	if !slices.Contains(rc.Roots, jtRun) || !slices.Contains(rc.Roots, bssRun) || !causeNamed(rc.Causes, Removed, "mds_user_clear") {
		t.Errorf("root change %q: roots %v, want the .bss and the jumptable runs:%s", rc, rc.Roots, describeRuns(d))
	}
	checkTraceInvariants(t, d)
	// The top change is the jump table, with no symbol before it in
	// .rodata: the patch's root is found through its root change.
	root, top, err := PatchRootFor(d, "")
	if err != nil || top.Name() != "jumptable" || root.Symbol != "mds_user_clear" || root.Kind != Removed {
		t.Errorf("PatchRootFor: %+v for %v, %v; want the removal of mds_user_clear for jumptable", root, top, err)
	}
}
