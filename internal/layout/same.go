package layout

import (
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
