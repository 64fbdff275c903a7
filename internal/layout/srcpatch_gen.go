// Source patches: the SrcPatch, the definition it inserts and the patch
// text.

package layout

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SrcPatch is a source patch that restores the old build's layout in the
// new build's source: one definition of the right size and alignment put
// at the root change's spot, as the seed report's debug patch put a static
// key back.
type SrcPatch struct {
	Root PatchRoot
	// Suspect is the symbol the patch is for (the top suspect), which
	// Check looks for; "" for none.
	Suspect string
	// File is the patched source file, relative to SrcDir.
	File   string
	SrcDir string
	// Line is the 1-based line of File the definition is inserted before
	// (one past the last line: at the end).
	Line int
	// Anchor is the symbol whose definition the spot is next to (After or
	// before it), at AnchorLine; "" when the file defines nothing else in
	// the section and the definition goes at its end.
	Anchor     string
	AnchorLine int
	After      bool
	// Order is how the file's section is laid out and how that was found,
	// e.g. "reverse source order (the neighbours' lines)".
	Order string
	// Name is the padding symbol; Section its section; Bytes and Align its
	// size and alignment (Align 0: the build's default).
	Name    string
	Section string
	Bytes   uint64
	Align   uint64
	// Exact is true when the patch gives every following symbol its old
	// address back; false when, for an added or grown symbol, only the
	// offsets mod 64 can come back.
	Exact bool
	// From says how the spot was found: "DWARF" or "object files".
	From string
	// Def holds the lines inserted; Diff is the patch in git's format,
	// for git apply.
	Def  []string
	Diff string
	// Notes say what the patch could not do or assumed.
	Notes []string

	orig, patched []byte
	spot, pad     uint64 // the old build's addresses from which everything must be back, and of the padding
	runs          []movedRun
}

// PatchOptions tunes [SourcePatchWith].
type PatchOptions struct {
	// SrcDir is the new build's source tree (required).
	SrcDir string
	// ObjDir holds the new build's object files beside their sources (an
	// in-tree build), for builds without DWARF and to learn input
	// sections; "" means SrcDir.
	ObjDir string
	// Context is the number of context lines of the diff (default 3).
	Context int
	// Suspect is the symbol the patch is for, which Check looks for.
	Suspect string
}

// SourcePatch writes the source patch that undoes root's effect on the
// layout in the new build's source tree srcDir: see [SourcePatchWith].
func SourcePatch(old, new *Binary, root PatchRoot, srcDir string) (*SrcPatch, error) {
	return SourcePatchWith(old, new, root, PatchOptions{SrcDir: srcDir})
}

// SourcePatchWith writes the source patch that undoes root's effect on the
// layout: for a removed symbol, a definition of its size and alignment
// where it was; for an added or resized one, the bytes after it that give
// what follows its old addresses (a shrink) or offsets mod 64 (a growth).
// The spot is found from the new build's DWARF (the neighbours'
// DW_AT_decl_line) or, without it, from the object files beside their
// sources and the neighbours' names.
func SourcePatchWith(old, new *Binary, root PatchRoot, opt PatchOptions) (*SrcPatch, error) {
	if opt.SrcDir == "" {
		return nil, fmt.Errorf("source patch: no source folder")
	}
	if fi, err := os.Stat(opt.SrcDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("source patch: %s is not a folder", opt.SrcDir)
	}
	if opt.ObjDir == "" {
		opt.ObjDir = opt.SrcDir
	}
	for _, p := range []*string{&opt.SrcDir, &opt.ObjDir} {
		if abs, err := filepath.Abs(*p); err == nil {
			*p = abs
		}
	}
	if opt.Context <= 0 {
		opt.Context = 3
	}
	d := Diff(old, new, DiffOptions{NoSource: true, Top: 1})
	p, err := planPatch(d, root)
	if err != nil {
		return nil, fmt.Errorf("source patch: %w", err)
	}
	pl := newPlacer(old, new, opt.SrcDir, opt.ObjDir)
	sp, err := pl.findSpot(p)
	if err != nil {
		return nil, fmt.Errorf("source patch: %w", err)
	}
	f := pl.files[sp.file]
	sec := p.sec
	sp2 := &SrcPatch{
		Root: root, Suspect: opt.Suspect, File: sp.file, SrcDir: opt.SrcDir, Line: sp.index + 1,
		Anchor: sp.anchor, AnchorLine: sp.line, After: sp.after, Order: sp.order,
		Name: padName(p.root.Name), Section: sec.Name, Bytes: p.bytes, Align: p.align, Exact: p.exact,
		From: "DWARF", spot: p.spot, pad: p.pad, runs: movedRuns(d, root),
	}
	if pl.dwNew == nil {
		sp2.From = "object files"
	}
	sp2.Notes = append(append(sp2.Notes, p.notes...), pl.notes...)
	export := ""
	if p.removed && hasSymbol(old, "__ksymtab_"+p.root.Name) {
		export = exportMacro(old, p.root.Name)
		if n := sameLengthName(p.root.Name, old, new); n != "" {
			sp2.Name = n
			table := "__ksymtab"
			if export == "EXPORT_SYMBOL_GPL" {
				table = "__ksymtab_gpl"
			}
			sp2.Notes = append(sp2.Notes, fmt.Sprintf("%s was exported: the padding is exported too (%s), under a name of the same length, so that the export tables (%s, __ksymtab_strings) and the kernel's symbol table keep their sizes", p.root.Name, export, table))
		} else {
			export = ""
			sp2.Notes = append(sp2.Notes, fmt.Sprintf("%s was exported (EXPORT_SYMBOL): the patch puts back the object, not its export, so the export tables stay shifted; an EXPORT_SYMBOL_GPL(%s) line added by hand gives them their number of entries back (the string table still differs by the names' lengths)", p.root.Name, sp2.Name))
		}
	}
	sp2.Def = padDef(sp2, p, sp, pl.unoptimised(sp.file), isCXX(sp.file))
	if export != "" {
		sp2.Def = append(sp2.Def, fmt.Sprintf("%s(%s);", export, sp2.Name))
	}
	if sec.Exec && p.bytes < 16 {
		sp2.Notes = append(sp2.Notes, fmt.Sprintf("%d bytes is less than a function's entry code may take (endbr64, a profiling call): check the result", p.bytes))
	}
	ins := frame(f, sp.index, sp2.Def)
	sp2.orig, _ = os.ReadFile(filepath.Join(opt.SrcDir, sp.file))
	sp2.patched = insertLines(f, sp.index, ins)
	sp2.Diff = unifiedInsert(filepath.ToSlash(sp.file), f, sp.index, ins, opt.Context)
	return sp2, nil
}

// hasSymbol reports whether b defines name, including the empty labels
// Open leaves out (a vmlinux has its export entries only as labels).
func hasSymbol(b *Binary, name string) bool {
	if len(b.Lookup(name)) > 0 {
		return true
	}
	if b.Format != ELF || b.Path == "" {
		return false
	}
	ef, err := elf.Open(b.Path)
	if err != nil {
		return false
	}
	defer ef.Close()
	syms, _ := ef.Symbols()
	for _, s := range syms {
		if s.Name == name && s.Section != elf.SHN_UNDEF {
			return true
		}
	}
	return false
}

// exportMacro returns the kernel macro that exported name in b:
// EXPORT_SYMBOL_GPL when its entry is in a section named __ksymtab_gpl,
// else EXPORT_SYMBOL.
func exportMacro(b *Binary, name string) string {
	for _, l := range b.Labels {
		if l.Name == "__ksymtab_"+name && strings.HasSuffix(l.Section.Name, "_gpl") {
			return "EXPORT_SYMBOL_GPL"
		}
	}
	for _, s := range b.Lookup("__ksymtab_" + name) {
		if strings.HasSuffix(s.Section.Name, "_gpl") {
			return "EXPORT_SYMBOL_GPL"
		}
	}
	return "EXPORT_SYMBOL"
}

// sameLengthName returns a padding name as long as name ("__pad_" and the
// start of name), defined in neither build, so that the export string
// table and the kernel's symbol names keep their sizes; "" when name is
// too short or the name is taken.
func sameLengthName(name string, builds ...*Binary) string {
	const prefix = "__pad_"
	if len(name) <= len(prefix) {
		return ""
	}
	n := prefix + name[:len(name)-len(prefix)]
	for _, b := range builds {
		if len(b.Lookup(n)) > 0 || hasSymbol(b, n) {
			return ""
		}
	}
	return n
}

// padName returns the padding symbol's name for root symbol name.
func padName(name string) string {
	var b strings.Builder
	b.WriteString("__perfbot_pad_")
	for _, r := range name {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func isCXX(file string) bool {
	switch filepath.Ext(file) {
	case ".cc", ".cpp", ".cxx", ".C":
		return true
	}
	return false
}

// padDef returns the definition's lines: a comment and an object of the
// root symbol's linkage (zero-initialised for .bss, initialised for .data,
// const for .rodata) or, for code, a static naked function of the right
// size.
func padDef(sp *SrcPatch, p *plan, at *spot, o0, cxx bool) []string {
	sec := p.sec
	var why string
	if p.removed {
		why = fmt.Sprintf("/* perfbot: puts back the %d bytes of %s (%s), removed by this change, so that what follows keeps its old address. */", p.bytes, p.root.Name, sec.Name)
	} else if p.exact {
		why = fmt.Sprintf("/* perfbot: %d bytes after %s (%s), which shrank by as much, so that what follows keeps its old address. */", p.bytes, p.root.Name, sec.Name)
	} else {
		why = fmt.Sprintf("/* perfbot: %d bytes after %s (%s, which moved what follows by %+d), so that what follows keeps its old offset mod 64. */", p.bytes, p.root.Name, sec.Name, p.shift)
	}
	// The reserved spellings: the kernel defines noinline (and others) as
	// macros, which would break the attribute list.
	attrs := "__used__"
	if p.align > 0 {
		attrs += fmt.Sprintf(", __aligned__(%d)", p.align)
	}
	if s := sectionAttr(sec, at.inSec); s != "" {
		attrs += fmt.Sprintf(", __section__(%q)", s)
	}
	n := sp.Name
	if sec.Exec {
		trailer := 2 // the ud2 gcc puts after a naked function's body
		if o0 {
			trailer = 3 // and a nop before it at -O0
		}
		out := []string{why}
		if cxx {
			out = append(out, fmt.Sprintf("static void %s(void) __asm__(%q);", n, n))
		}
		return append(out,
			fmt.Sprintf("__attribute__((__naked__, __noinline__, %s)) static void %s(void)", attrs, n),
			"{",
			fmt.Sprintf("\t__asm__(\".skip %d - %d - (. - %s), 0xcc\");", p.bytes, trailer, n),
			"}")
	}
	// The same linkage as the symbol it stands for: gcc allocates a
	// static zero-initialised variable as a local common after the file's
	// other .bss variables, a global one in place (with -fno-common).
	storage := ""
	if p.root.Local {
		storage = "static "
	}
	var def string
	switch {
	case sec.TLS && sec.NoBits:
		def = fmt.Sprintf("%s__thread char %s[%d] __attribute__((%s));", storage, n, p.bytes, attrs)
	case sec.TLS:
		def = fmt.Sprintf("%s__thread char %s[%d] __attribute__((%s)) = { 1 };", storage, n, p.bytes, attrs)
	case sec.NoBits:
		def = fmt.Sprintf("%schar %s[%d] __attribute__((%s));", storage, n, p.bytes, attrs)
	case sec.Writable:
		def = fmt.Sprintf("%schar %s[%d] __attribute__((%s)) = { 1 };", storage, n, p.bytes, attrs)
	default:
		def = fmt.Sprintf("%sconst char %s[%d] __attribute__((%s)) = { 1 };", storage, n, p.bytes, attrs)
	}
	if at.depth > 0 {
		why, def = "\t"+why, "\t"+def
	}
	return []string{why, def}
}

// sectionAttr returns the section the definition must name: none for the
// sections a compiler picks by itself (.bss, .data, .rodata, .text, the
// TLS ones and their -fdata-sections variants), else the input section
// (such as the kernel's .data..read_mostly) or, when unknown, the output
// section.
func sectionAttr(sec *Section, in string) string {
	std := func(n string) bool {
		for _, s := range []string{".bss", ".data", ".rodata", ".text", ".tbss", ".tdata"} {
			if n == s || (strings.HasPrefix(n, s+".") && !strings.HasPrefix(n, s+"..") && !strings.HasPrefix(n, ".data.rel.ro")) {
				return true
			}
		}
		return false
	}
	switch {
	case in != "" && !std(in):
		return in
	case in == "" && !std(sec.Name):
		return sec.Name
	}
	return ""
}

// frame surrounds the definition with blank lines where its neighbours
// in the file are not blank.
func frame(f *cFile, at int, def []string) []string {
	var out []string
	if at > 0 && strings.TrimSpace(f.lines[at-1]) != "" && !strings.HasSuffix(strings.TrimSpace(f.lines[at-1]), "{") {
		out = append(out, "")
	}
	out = append(out, def...)
	if at < len(f.lines) && strings.TrimSpace(f.lines[at]) != "" && strings.TrimSpace(f.lines[at]) != "}" {
		out = append(out, "")
	}
	return out
}

// insertLines returns f's text with ins inserted before line at.
func insertLines(f *cFile, at int, ins []string) []byte {
	lines := append(append(append([]string{}, f.lines[:at]...), ins...), f.lines[at:]...)
	out := strings.Join(lines, "\n")
	if f.finalNewline || at == len(f.lines) {
		out += "\n"
	}
	return []byte(out)
}

// unifiedInsert returns the git-format diff that inserts ins before line
// at of file path.
func unifiedInsert(path string, f *cFile, at int, ins []string, ctx int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", path, path, path, path)
	lo, hi := max(0, at-ctx), min(len(f.lines), at+ctx)
	n := len(f.lines)
	noEOL := func(i int) bool { return i == n-1 && !f.finalNewline }
	var body strings.Builder
	oldCount, newCount := 0, 0
	for i := lo; i < at; i++ {
		if noEOL(i) { // inserting at the end of a file without a final newline
			fmt.Fprintf(&body, "-%s\n\\ No newline at end of file\n+%s\n", f.lines[i], f.lines[i])
		} else {
			fmt.Fprintf(&body, " %s\n", f.lines[i])
		}
		oldCount++
		newCount++
	}
	for _, l := range ins {
		fmt.Fprintf(&body, "+%s\n", l)
		newCount++
	}
	for i := at; i < hi; i++ {
		fmt.Fprintf(&body, " %s\n", f.lines[i])
		if noEOL(i) {
			body.WriteString("\\ No newline at end of file\n")
		}
		oldCount++
		newCount++
	}
	oldStart := lo + 1
	if oldCount == 0 {
		oldStart = lo
	}
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n%s", oldStart, oldCount, lo+1, newCount, body.String())
	return b.String()
}

// Patched returns the patched file's contents.
func (sp *SrcPatch) Patched() []byte { return sp.patched }

// Apply writes the patched file into dir, a checkout of the same source
// (such as a worktree of the changed commit), after checking that the
// file there is the one the patch was made from.
func (sp *SrcPatch) Apply(dir string) error {
	p := filepath.Join(dir, sp.File)
	cur, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, sp.orig) {
		return fmt.Errorf("%s differs from %s: the patch was made for another version", p, filepath.Join(sp.SrcDir, sp.File))
	}
	return os.WriteFile(p, sp.patched, 0o644)
}
