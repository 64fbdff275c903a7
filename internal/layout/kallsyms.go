// The symbol table a Linux kernel carries (kallsyms): written in
// assembler into .rodata and bracketed by labels only, it shrinks when a
// symbol goes and moves what follows it. Decoding it in both builds says
// whose names it lost or gained.

package layout

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// kallsymsPrefix starts the labels of the kernel's symbol table
// (kallsyms_offsets, kallsyms_names, kallsyms_markers, ...).
const kallsymsPrefix = "kallsyms_"

// maxKallsyms bounds the number of names decoded from a symbol table.
const maxKallsyms = 1 << 22

// label returns the label called name, or nil.
func (b *Binary) label(name string) *Label {
	for i := range b.Labels {
		if b.Labels[i].Name == name {
			return &b.Labels[i]
		}
	}
	return nil
}

// readAddr reads n bytes at address addr of section sec of an ELF build.
func (b *Binary) readAddr(sec *Section, addr, n uint64) ([]byte, error) {
	if b.Format != ELF || sec == nil || sec.NoBits || addr < sec.Addr || addr+n > sec.Addr+sec.Size || addr+n < addr {
		return nil, fmt.Errorf("%#x+%d: not in the file contents of section %v", addr, n, sec)
	}
	var r io.ReaderAt = b.ra
	if r == nil {
		f, err := os.Open(b.Path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, int64(sec.offset+addr-sec.Addr)); err != nil {
		return nil, err
	}
	return buf, nil
}

// between reads the bytes from label from up to label to, which must lie
// in the same section in that order.
func (b *Binary) between(from, to string) ([]byte, error) {
	lf, lt := b.label(from), b.label(to)
	if lf == nil || lt == nil || lf.Section != lt.Section || lt.Addr < lf.Addr {
		return nil, fmt.Errorf("no labels %s and %s in one section, in that order", from, to)
	}
	return b.readAddr(lf.Section, lf.Addr, lt.Addr-lf.Addr)
}

// kallsymsNames decodes the names of a kernel's symbol table, as
// scripts/kallsyms writes it (Linux 6.1: kallsyms_num_syms, then
// kallsyms_names, each name a length of one or two bytes and token
// numbers, expanded by kallsyms_token_table and kallsyms_token_index).
// Each name is counted without its type letter.
func (b *Binary) kallsymsNames() (map[string]int, error) {
	le := binary.LittleEndian
	num := b.label("kallsyms_num_syms")
	if num == nil {
		return nil, errors.New("no label kallsyms_num_syms")
	}
	raw, err := b.readAddr(num.Section, num.Addr, 4)
	if err != nil {
		return nil, err
	}
	n := le.Uint32(raw)
	names, err := b.between("kallsyms_names", "kallsyms_markers")
	if err != nil {
		return nil, err
	}
	tokens, err := b.between("kallsyms_token_table", "kallsyms_token_index")
	if err != nil {
		return nil, err
	}
	ti := b.label("kallsyms_token_index")
	index, err := b.readAddr(ti.Section, ti.Addr, 2*256)
	if err != nil {
		return nil, err
	}
	if n > maxKallsyms {
		return nil, fmt.Errorf("kallsyms_num_syms is %d, more than %d", n, maxKallsyms)
	}
	var tok [256]string
	for k := range tok {
		off := int(le.Uint16(index[2*k:]))
		end := off
		for end < len(tokens) && tokens[end] != 0 {
			end++
		}
		if end >= len(tokens) {
			return nil, fmt.Errorf("token %d at offset %d runs past kallsyms_token_index", k, off)
		}
		tok[k] = string(tokens[off:end])
	}
	out := make(map[string]int, n)
	var sb strings.Builder
	p := 0
	for i := range n {
		if p >= len(names) {
			return nil, fmt.Errorf("name %d of %d lies past kallsyms_markers", i, n)
		}
		l := int(names[p])
		p++
		if l&0x80 != 0 {
			if p >= len(names) {
				return nil, fmt.Errorf("name %d: its length runs past kallsyms_markers", i)
			}
			l = l&0x7f | int(names[p])<<7
			p++
		}
		if l == 0 || p+l > len(names) {
			return nil, fmt.Errorf("name %d: length %d at offset %d does not fit before kallsyms_markers", i, l, p)
		}
		sb.Reset()
		for _, t := range names[p : p+l] {
			sb.WriteString(tok[t])
		}
		p += l
		if s := sb.String(); len(s) > 1 {
			out[s[1:]]++ // the first letter is the symbol's type
		}
	}
	return out, nil
}

// kallsymsDiff holds what the trace learnt of the builds' symbol tables.
type kallsymsDiff struct {
	read        bool
	lost, added []string // names only A's table has, only B's, sorted; nil when either does not decode
}

// kallsymsTables names, for tables between kallsyms labels that changed
// size, the names the kernel's symbol table lost (or gained), and the
// removed (or added) symbol among them, which makes the run part of that
// symbol's root change.
func (t *tracer) kallsymsTables(tables []Cause) {
	first := true
	for k := range tables {
		c := &tables[k]
		if c.Kind != Table || c.Until == "" || !strings.HasPrefix(c.Table, kallsymsPrefix) && !strings.HasPrefix(c.Until, kallsymsPrefix) {
			continue
		}
		ks := t.kallsyms()
		names, syms := ks.lost, t.d.Removed
		if c.Bytes > 0 {
			names, syms = ks.added, t.d.Added
		}
		if len(names) == 0 {
			continue
		}
		if first {
			c.Names, first = names, false
		}
		for _, s := range syms {
			if _, ok := slices.BinarySearch(names, s.Name); ok {
				c.Symbol = s
				break
			}
		}
	}
}

// kallsyms decodes both builds' symbol tables once and compares them.
func (t *tracer) kallsyms() *kallsymsDiff {
	ks := &t.kallsymsD
	if ks.read {
		return ks
	}
	ks.read = true
	a, errA := t.d.A.kallsymsNames()
	b, errB := t.d.B.kallsymsNames()
	if errA != nil || errB != nil {
		// Not a kernel's table, or not one this version of scripts/kallsyms
		// wrote: the causes name the tables without their names.
		return ks
	}
	ks.lost, ks.added = countDiff(a, b), countDiff(b, a)
	return ks
}

// countDiff returns the names x counts more often than y, sorted.
func countDiff(x, y map[string]int) []string {
	var out []string
	for s, n := range x {
		if n > y[s] {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}
