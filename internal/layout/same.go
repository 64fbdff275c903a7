package layout

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"strings"
)

// SameLayout checks with the layout diff that builds a and b put every
// symbol at the same address with the same size, as two builds of one
// source that differ only in their debug information (-g) must. It returns
// nil when they do, else an error naming the first differences.
func SameLayout(a, b *Binary) error {
	d := Diff(a, b, DiffOptions{NoSource: true, Top: 1})
	var diffs []string
	n := 0
	add := func(s string) {
		n++
		if len(diffs) < 3 {
			diffs = append(diffs, s)
		}
	}
	for _, s := range d.Removed {
		add(fmt.Sprintf("%s only in the first", s.Name))
	}
	for _, s := range d.Added {
		add(fmt.Sprintf("%s only in the second", s.Name))
	}
	for i := range d.Changes {
		c := &d.Changes[i]
		if c.A.Addr != c.B.Addr || c.A.Size != c.B.Size {
			add(fmt.Sprintf("%s at %#x (%d bytes), then %#x (%d bytes)", c.A.Name, c.A.Addr, c.A.Size, c.B.Addr, c.B.Size))
		}
	}
	if n == 0 {
		return nil
	}
	more := ""
	if n > len(diffs) {
		more = fmt.Sprintf("; %d more", n-len(diffs))
	}
	return fmt.Errorf("%d of %d symbols are laid out differently: %s%s", n, len(d.Changes)+len(d.Removed)+len(d.Added), strings.Join(diffs, "; "), more)
}

// SameImage reports whether the ELF files at paths a and b load the same
// bytes at the same addresses: the same entry point, and every allocated
// section (notes left out: a GNU build ID hashes the whole file, debug
// information included) with the same name, type, address, size and
// contents. Two builds that differ only in their debug information (the
// build folder's path in DWARF) or symbol tables do; an error says that a
// file is not ELF. The loadable segments (PT_LOAD) must match too; a file
// without section headers (sstrip, strip --strip-section-headers) is
// compared by its segments' bytes, so two different programs never pass
// for one.
func SameImage(a, b string) (bool, error) {
	fa, err := elf.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := elf.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	if fa.Entry != fb.Entry || fa.Machine != fb.Machine {
		return false, nil
	}
	loaded := func(f *elf.File) []*elf.Section {
		var out []*elf.Section
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOTE {
				out = append(out, s)
			}
		}
		return out
	}
	pa, pb := loads(fa), loads(fb)
	if len(pa) != len(pb) {
		return false, nil
	}
	for i, x := range pa {
		y := pb[i]
		if x.Vaddr != y.Vaddr || x.Memsz != y.Memsz || x.Filesz != y.Filesz || x.Flags != y.Flags {
			return false, nil
		}
	}
	sa, sb := loaded(fa), loaded(fb)
	if len(sa) == 0 || len(sb) == 0 {
		// No section headers to compare: the loaded bytes themselves.
		if len(sa) != len(sb) || len(pa) == 0 {
			return false, nil
		}
		return sameSegments(fa, fb, pa, pb)
	}
	if len(sa) != len(sb) {
		return false, nil
	}
	for i, x := range sa {
		y := sb[i]
		if x.Name != y.Name || x.Type != y.Type || x.Addr != y.Addr || x.Size != y.Size || x.Flags != y.Flags {
			return false, nil
		}
		if x.Type == elf.SHT_NOBITS {
			continue
		}
		dx, err := x.Data()
		if err != nil {
			return false, err
		}
		dy, err := y.Data()
		if err != nil {
			return false, err
		}
		if !bytes.Equal(dx, dy) {
			return false, nil
		}
	}
	return true, nil
}

// loads returns a file's loadable segments.
func loads(f *elf.File) []*elf.Prog {
	var out []*elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			out = append(out, p)
		}
	}
	return out
}

// sameSegments compares the file bytes of two files' loadable segments,
// leaving out the ELF header (it holds the section header table's offset,
// which debug information moves).
func sameSegments(fa, fb *elf.File, pa, pb []*elf.Prog) (bool, error) {
	ehdr := uint64(64)
	if fa.Class == elf.ELFCLASS32 {
		ehdr = 52
	}
	for i, x := range pa {
		y := pb[i]
		dx, err := io.ReadAll(x.Open())
		if err != nil {
			return false, err
		}
		dy, err := io.ReadAll(y.Open())
		if err != nil {
			return false, err
		}
		if x.Off == 0 && y.Off == 0 && uint64(len(dx)) >= ehdr && uint64(len(dy)) >= ehdr {
			dx, dy = dx[ehdr:], dy[ehdr:]
		}
		if !bytes.Equal(dx, dy) {
			return false, nil
		}
	}
	return true, nil
}
