package layout

import (
	"bytes"
	"debug/elf"
	"fmt"
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
// file is not ELF.
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
	sa, sb := loaded(fa), loaded(fb)
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
