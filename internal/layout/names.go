package layout

import "strings"

// cloneTags are the name parts compilers append to clones and split-off
// parts of a function: gcc's .isra.N, .constprop.N, .part.N, .cold(.N),
// .lto_priv.N, .localalias, clang's .llvm.HASH, and the plain .N gcc gives
// function-local statics.
var cloneTags = map[string]bool{
	"isra": true, "constprop": true, "part": true, "cold": true,
	"lto_priv": true, "localalias": true, "llvm": true, "clone": true,
	"specialized": true,
}

// MatchKey returns the name under which a symbol is matched across two
// builds: its name with the numbers of numeric parts dropped, so that
// foo.isra.0 matches foo.isra.1, x.3 matches x.4 and main.init.0 matches
// main.init.1, while foo, foo.cold and foo.part.0 stay apart.
func MatchKey(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return name
	}
	if !hasNumericPart(name[:i]) {
		// Common case: at most the last part is numeric; slice, don't allocate.
		if isDigits(name[i+1:]) {
			return name[:i+1]
		}
		return name
	}
	parts := strings.Split(name, ".")
	for j := 1; j < len(parts); j++ {
		if isDigits(parts[j]) {
			parts[j] = ""
		}
	}
	return strings.Join(parts, ".")
}

// hasNumericPart reports whether any dot-separated part of s after the
// first is all digits.
func hasNumericPart(s string) bool {
	for {
		i := strings.IndexByte(s, '.')
		if i < 0 {
			return false
		}
		s = s[i+1:]
		j := strings.IndexByte(s, '.')
		if j < 0 {
			return isDigits(s)
		}
		if isDigits(s[:j]) {
			return true
		}
	}
}

// BaseName strips every trailing clone tag and number from name:
// foo.isra.0 and foo.constprop.0.cold both become foo. It is the second
// matching rule, used only when a symbol has no partner under [MatchKey].
func BaseName(name string) string {
	for {
		i := strings.LastIndexByte(name, '.')
		if i <= 0 {
			return name
		}
		last := name[i+1:]
		if !isDigits(last) && !cloneTags[last] {
			return name
		}
		name = name[:i]
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// coldSectionPrefixes are kernel sections that no hot path reads: code
// and data freed after boot, the export and parameter tables (read at
// module load and boot) and ELF notes.
var coldSectionPrefixes = []string{".init.", ".exit.", "__ksymtab", "__kcrctab", "__param", "__modver", ".notes", ".modinfo"}

// coldSymbolPrefixes are the names of the entries of those tables, for
// System.map input, whose sections are only classes such as ".rodata".
var coldSymbolPrefixes = []string{"__ksymtab_", "_note_", "__kstrtab_", "__kstrtabns_", "__kcrctab_", "__param_", "__initcall_", "__setup_", "__exitcall_"}

// coldTable reports whether s is in a kernel table that no hot path
// reads, so that its moving within a cache line cannot change a
// benchmark's speed: such changes rank last.
func coldTable(s *Symbol) bool {
	if s.Section != nil {
		for _, p := range coldSectionPrefixes {
			if strings.HasPrefix(s.Section.Name, p) {
				return true
			}
		}
	}
	for _, p := range coldSymbolPrefixes {
		if strings.HasPrefix(s.Name, p) {
			return true
		}
	}
	return false
}
