// CauseKind and Cause: why a shift run starts.

package layout

import (
	"fmt"
	"strings"
)

// CauseKind says why a shift run starts.
type CauseKind uint8

// Cause kinds.
const (
	Added        CauseKind = iota // a symbol present only in B
	Removed                       // a symbol present only in A
	Resized                       // the symbol before changed size
	Reordered                     // symbols changed order or section
	SectionMoved                  // the whole section starts elsewhere
	Realigned                     // alignment padding changed (e.g. -falign-functions)
	Table                         // a table without symbols of its own changed size
)

var causeNames = [...]string{"added", "removed", "resized", "reordered", "section moved", "realigned", "table"}

// String returns the kind in words: "added", "removed", "resized",
// "reordered", "section moved", "realigned" or "table".
func (k CauseKind) String() string {
	if int(k) < len(causeNames) {
		return causeNames[k]
	}
	return fmt.Sprintf("CauseKind(%d)", k)
}

// Cause is one reason a shift run starts.
type Cause struct {
	Kind CauseKind
	// Symbol is the symbol added (from B), removed (from A), resized or
	// reordered (from B); nil for SectionMoved and Realigned. For a Table
	// cause, the symbol whose export the table's change is, when known:
	// the export entry (__ksymtab_NAME) of an Estimated one, or the
	// removed or added symbol whose name __ksymtab_strings lost or gained.
	Symbol *Symbol
	// Bytes is the cause's contribution to the shift: +size for Added,
	// -size for Removed, the size change for Resized and Table, the
	// section's move for SectionMoved, the rest for Realigned.
	Bytes int64
	// Table is the table a Table cause is about, e.g. "__ksymtab_gpl".
	Table string
	// Estimated is true for a Table cause whose bytes are estimated rather
	// than read: an exported symbol's name in __ksymtab_strings, which a
	// System.map does not list.
	Estimated bool
	// Until is, for a Table cause found between labels of an ELF file
	// (data with no sized symbol of its own, such as a table written in
	// assembler), the label where the data ends; Table is then the label
	// where it starts, or "" when it starts after the symbol After.
	Until, After string
	// Names are, for the first Table cause of a run between the labels of
	// a kernel's symbol table (kallsyms_*), the names that table lost
	// (Bytes < 0) or gained, decoded from both builds, sorted; Symbol is
	// then the removed or added symbol among them, if any.
	Names []string
	// Count is 1 for a cause about one symbol. Added and Removed causes
	// beyond the first few of a run are summed into one cause with Symbol
	// nil and Count symbols; a Reordered cause counts the symbols of A found
	// between the run and the one before it that moved elsewhere in B
	// (Symbol is one of them, in B).
	Count int
}

// String describes the cause in a few words, e.g.
// "removed mds_user_clear (16 bytes)".
func (c Cause) String() string {
	switch {
	case c.Kind == Added && c.Symbol == nil:
		return fmt.Sprintf("added %d more symbols (%d bytes)", c.Count, c.Bytes)
	case c.Kind == Added:
		return fmt.Sprintf("added %s (%d bytes)", c.Symbol.Name, c.Bytes)
	case c.Kind == Removed && c.Symbol == nil:
		return fmt.Sprintf("removed %d more symbols (%d bytes)", c.Count, -c.Bytes)
	case c.Kind == Removed:
		return fmt.Sprintf("removed %s (%d bytes)", c.Symbol.Name, -c.Bytes)
	case c.Kind == Resized:
		return fmt.Sprintf("%s resized (%+d bytes)", c.Symbol.Name, c.Bytes)
	case c.Kind == Reordered && c.Count > 1 && c.Symbol != nil:
		return fmt.Sprintf("%d symbols moved out of order (such as %s)", c.Count, c.Symbol.Name)
	case c.Kind == Reordered && c.Symbol != nil:
		return fmt.Sprintf("%s moved out of order", c.Symbol.Name)
	case c.Kind == Reordered:
		return fmt.Sprintf("%d symbols moved out of order", c.Count)
	case c.Kind == SectionMoved:
		return fmt.Sprintf("section start moved %+d bytes", c.Bytes)
	case c.Kind == Realigned:
		return fmt.Sprintf("alignment padding changed (%+d bytes)", c.Bytes)
	case c.Kind == Table && c.Until != "":
		what := "table " + c.Table
		if c.Table == "" {
			what = "the data after " + c.After
		}
		return fmt.Sprintf("%s resized (%+d bytes, up to label %s%s)", what, c.Bytes, c.Until, c.namesText())
	case c.Kind == Table && c.Estimated && c.Symbol != nil:
		return fmt.Sprintf("the name of %s in %s (about %+d bytes)", exportedName(c.Symbol.Name), c.Table, c.Bytes)
	case c.Kind == Table && c.Symbol != nil:
		return fmt.Sprintf("table %s resized (%+d bytes, with the export of %s)", c.Table, c.Bytes, c.Symbol.Name)
	case c.Kind == Table:
		return fmt.Sprintf("table %s resized (%+d bytes)", c.Table, c.Bytes)
	}
	return c.Kind.String()
}

// maxNamesText bounds the names a cause's text lists.
const maxNamesText = 6

// namesText describes the names a symbol table lost or gained, or the
// symbol they are about, for a Table cause between labels.
func (c Cause) namesText() string {
	verb := "lost"
	if c.Bytes > 0 {
		verb = "gained"
	}
	switch {
	case len(c.Names) > 0:
		shown := c.Names[:min(len(c.Names), maxNamesText)]
		more := ""
		if len(c.Names) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(c.Names)-len(shown))
		}
		return fmt.Sprintf("; the symbol table %s %d names: %s%s", verb, len(c.Names), strings.Join(shown, ", "), more)
	case c.Symbol != nil:
		return fmt.Sprintf(", with the names of %s", c.Symbol.Name)
	}
	return ""
}
