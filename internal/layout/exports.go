// Export tables of a Linux kernel: an exported symbol has an entry in
// __ksymtab or __ksymtab_gpl and its name in __ksymtab_strings, which
// move what follows them when the export comes or goes.

package layout

import "strings"

// exportNames returns, for the export entries (__ksymtab_NAME) a root
// run's causes add or remove, the estimated change of __ksymtab_strings:
// each NAME and its NUL. A System.map lists the entries but not the
// strings, so the strings show up as padding further on. Nothing when the
// map lists the strings (__kstrtab_NAME) too.
func (t *tracer) exportNames(cs []Cause) []Cause {
	var out []Cause
	for _, c := range cs {
		if c.Symbol == nil || c.Kind != Added && c.Kind != Removed || !strings.HasPrefix(c.Symbol.Name, "__ksymtab_") {
			continue
		}
		name := exportedName(c.Symbol.Name)
		if name == "" || t.listsStrings() {
			continue
		}
		n := int64(len(name) + 1)
		if c.Kind == Removed {
			n = -n
		}
		out = append(out, Cause{Kind: Table, Table: "__ksymtab_strings", Symbol: c.Symbol, Bytes: n, Count: 1, Estimated: true})
	}
	return out
}

// listsStrings reports whether build A lists the export strings as
// symbols (__kstrtab_NAME), as System.map files of older kernels do.
func (t *tracer) listsStrings() bool {
	e := &t.exports
	if !e.looked {
		e.looked = true
		for i := range t.d.A.Symbols {
			if strings.HasPrefix(t.d.A.Symbols[i].Name, "__kstrtab_") {
				e.listed = true
				break
			}
		}
	}
	return e.listed
}

// exportStrings holds what the trace learnt of the export string tables.
type exportStrings struct {
	looked, listed bool // A's symbols searched for __kstrtab_NAME; found
	read           bool // the ELF sections __ksymtab_strings read
	a, b           map[string]bool
}

// exportTables names, for a change of the ELF section __ksymtab_strings,
// the removed (or added) symbol whose name the table lost (or gained).
func (t *tracer) exportTables(tables []Cause) {
	for k := range tables {
		c := &tables[k]
		if c.Table != "__ksymtab_strings" {
			continue
		}
		e := &t.exports
		if !e.read {
			e.read = true
			e.a, e.b = t.d.A.sectionStrings(c.Table), t.d.B.sectionStrings(c.Table)
		}
		from, lost, kept := t.d.Removed, e.a, e.b
		if c.Bytes > 0 {
			from, lost, kept = t.d.Added, e.b, e.a
		}
		for _, s := range from {
			if lost[s.Name] && !kept[s.Name] {
				c.Symbol = s
				break
			}
		}
	}
}

// exportPrefixes are the names the kernel gives an exported symbol's
// entries in its export tables.
var exportPrefixes = []string{"__ksymtab_", "__kstrtabns_", "__kstrtab_", "__kcrctab_"}

// exportedName returns NAME for an export table entry such as
// __ksymtab_NAME, "" for other names.
func exportedName(name string) string {
	for _, p := range exportPrefixes {
		if rest, ok := strings.CutPrefix(name, p); ok {
			return rest
		}
	}
	return ""
}

// maxStringTable bounds the size of a string table read by
// sectionStrings.
const maxStringTable = 16 << 20

// sectionStrings returns the NUL-terminated strings of section name of an
// ELF build, nil when there is no such section or it cannot be read.
func (b *Binary) sectionStrings(name string) map[string]bool {
	sec := b.section(name)
	if b.Format != ELF || sec == nil || sec.NoBits || sec.Size == 0 || sec.Size > maxStringTable {
		return nil
	}
	buf, err := b.readAddr(sec, sec.Addr, sec.Size)
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, s := range strings.Split(string(buf), "\x00") {
		if s != "" {
			out[s] = true
		}
	}
	return out
}
