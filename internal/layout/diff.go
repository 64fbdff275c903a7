package layout

import (
	"fmt"

	"github.com/perfbot/perfbot/internal/profile"
)

// DiffOptions tunes [Diff]. The zero value is ready to use.
type DiffOptions struct {
	// Hot, when set, ranks changes by the functions' self fraction in this
	// profile; otherwise changes are ranked by alignment-class change.
	Hot *profile.Hotness
	// Top is how many of the top-ranked changes (and, with a profile, how
	// many of the hottest functions) get the expensive analysis: loops from
	// disassembly and source lines from DWARF. 0 means 20.
	Top int
	// Symbols are always analysed in depth, whatever their rank.
	Symbols []string
	// MaxDWARF is the largest size of debug sections loaded for source
	// lines; 0 means DefaultMaxDWARF, negative means no limit.
	MaxDWARF int64
	// NoSource skips source lines entirely.
	NoSource bool
}

// Ranking says how [DiffResult.Ranked] is ordered.
type Ranking string

// Rankings.
const (
	ByProfile   Ranking = "profile"   // by the functions' hotness in a profile
	ByAlignment Ranking = "alignment" // by alignment-class change
)

// DiffResult is the layout difference between builds A (before) and B
// (after).
type DiffResult struct {
	A, B *Binary
	// Ranking is ByProfile when Changes were ranked by a profile's
	// hotness, ByAlignment when by alignment-class change.
	Ranking Ranking
	// Profile names the profile's format when Ranking is ByProfile.
	Profile string

	// Changes holds every symbol found in both builds, in B's section and
	// address order.
	Changes []Change
	// Ranked lists the changes worth a look, most likely to matter first:
	// those whose alignment class changed and, with a profile, the hot
	// functions even when unchanged (with Weight 0).
	Ranked []*Change
	// Added are the symbols only in B, Removed those only in A.
	Added, Removed []*Symbol
	// Runs are the shift runs of each section of B, in address order,
	// each traced to the run whose own causes started its shift (Run.Root).
	Runs []Run
	// RootChanges group the runs by the change that started them, ranked:
	// the one holding the top-ranked change first (see [RootChange]).
	RootChanges []RootChange
	// Shared are the pairs of writable objects that share a 64-byte line
	// in one build only: false-sharing candidates gained or lost.
	Shared []SharedLine
	// Sections compares the sections found in both builds.
	Sections []SectionChange
	// Notes say what the diff could not do or assumed (no profile, sizes
	// guessed from a System.map, no DWARF, ...).
	Notes []string
	Stats Stats
}

// Stats counts the changes.
type Stats struct {
	Matched, Added, Removed int
	Moved                   int // address changed
	Off64Changed            int // offset mod 64 changed
	LinesChanged            int // number of 64-byte lines touched changed
	NewStraddles            int // straddle a line in B but not in A
	LostStraddles           int // straddled in A but not in B
	SharedGained            int // writable pairs sharing a line in B only
	SharedLost              int // writable pairs sharing a line in A only
}

// SectionChange compares one section across the builds.
type SectionChange struct {
	Name       string
	A, B       *Section
	Shift      int64 // B.Addr - A.Addr
	SizeChange int64 // B.Size - A.Size
}

// Diff compares the layouts of builds a (before) and b (after).
func Diff(a, b *Binary, opt DiffOptions) *DiffResult {
	if opt.Top <= 0 {
		opt.Top = 20
	}
	if opt.MaxDWARF == 0 {
		opt.MaxDWARF = DefaultMaxDWARF
	}
	d := &DiffResult{A: a, B: b, Ranking: ByAlignment}
	if opt.Hot != nil {
		d.Ranking, d.Profile = ByProfile, opt.Hot.Source
	} else {
		d.Notes = append(d.Notes, "no profile given: ranked by alignment-class change (pass a profile to rank by hotness)")
	}
	if a.Format == SystemMap || b.Format == SystemMap {
		d.Notes = append(d.Notes, "symbol map input: sizes are guessed from the next symbol's address (they include padding), and there are no loops or source lines")
	}
	if a.Arch != b.Arch && a.Arch != "" && b.Arch != "" {
		d.Notes = append(d.Notes, fmt.Sprintf("the builds are for different machines (%s, %s)", a.Arch, b.Arch))
	}

	matchA, matchB := match(a, b)
	d.buildChanges(matchA, matchB)
	d.compareSections()
	d.findRuns(matchA, matchB)
	d.traceRuns(matchB)
	d.findShared()
	d.rank(opt)
	d.analyse(opt)
	d.groupRoots()
	return d
}

// buildChanges makes one Change per matched pair, in B's order, and lists
// the added and removed symbols.
func (d *DiffResult) buildChanges(matchA, matchB []int32) {
	a, b := d.A, d.B
	n := 0
	for _, m := range matchB {
		if m >= 0 {
			n++
		}
	}
	d.Changes = make([]Change, 0, n)
	for ib, ia := range matchB {
		if ia == aliasOnly {
			continue
		}
		if ia < 0 {
			d.Added = append(d.Added, &b.Symbols[ib])
			continue
		}
		c := Change{A: &a.Symbols[ia], B: &b.Symbols[ib], Run: -1, ia: ia, ib: int32(ib)}
		d.Changes = append(d.Changes, c)
	}
	for ia, ib := range matchA {
		if ib == unmatched {
			d.Removed = append(d.Removed, &a.Symbols[ia])
		}
	}
	st := &d.Stats
	st.Matched, st.Added, st.Removed = len(d.Changes), len(d.Added), len(d.Removed)
	for i := range d.Changes {
		c := &d.Changes[i]
		if c.A.Addr != c.B.Addr {
			st.Moved++
		}
		if c.Off64Changed() {
			st.Off64Changed++
		}
		if c.LinesChanged() {
			st.LinesChanged++
		}
		switch sa, sb := c.A.Straddles(), c.B.Straddles(); {
		case sb && !sa:
			st.NewStraddles++
		case sa && !sb:
			st.LostStraddles++
		}
	}
}

func (d *DiffResult) compareSections() {
	for _, sb := range d.B.Sections {
		sa := d.A.section(sb.Name)
		if sa == nil {
			continue
		}
		d.Sections = append(d.Sections, SectionChange{
			Name: sb.Name, A: sa, B: sb,
			Shift:      int64(sb.Addr - sa.Addr),
			SizeChange: int64(sb.Size - sa.Size),
		})
	}
}
