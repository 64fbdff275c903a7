package layout

import (
	"cmp"
	"debug/elf"
	"fmt"
	"slices"
	"sort"

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

// DiffResult is the layout difference between builds A (before) and B
// (after).
type DiffResult struct {
	A, B *Binary
	// Ranking is "profile" when Changes were ranked by a profile's
	// hotness, "alignment" when by alignment-class change.
	Ranking string
	// Profile names the profile's format when Ranking is "profile".
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
	// Runs are the shift runs of each section of B, in address order.
	Runs []Run
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

// Change is one symbol found in both builds.
type Change struct {
	A, B *Symbol
	// Hot is the function's self fraction in the profile (0 without one).
	Hot float64
	// Weight grades the alignment-class change, 0 (same offset mod 4096
	// and same lines) to 4 (an inner loop now crosses a line or its line
	// offset changed); see the Weight* constants.
	Weight float64
	// Score orders Ranked: with a profile Hot*Weight (0 when Weight is
	// below WeightOff64: the lines did not change), without one Weight;
	// ties go by Weight, then Hot.
	Score float64
	// Run is the index in DiffResult.Runs of the run holding B, -1 if none.
	Run int
	// Loops are the function's loops in both builds; set only for analysed
	// functions (the top-ranked, the hottest and the requested ones).
	Loops []LoopChange
	// LoopsNote says why Loops is empty for an analysed function, or "".
	LoopsNote string
	// Analysed is true when loops and source were looked for.
	Analysed bool
	// Source is B's "file:line" of the symbol when DWARF gave one.
	Source string

	ia, ib int32 // indices in A.Symbols and B.Symbols
}

// Alignment-class weights, from least to most likely to matter.
const (
	WeightNone       = 0   // same address mod 4096 and same lines
	WeightPage       = 0.1 // moved, same offset mod 64, different mod 4096
	WeightOff64      = 1   // offset mod 64 changed, same offset mod 32
	WeightOff32      = 2   // offset mod 32 changed
	WeightLines      = 3   // touches a different number of lines, or straddling changed
	WeightOuterLoop  = 2.5 // an outer loop's line offset or crossing changed
	WeightInnerLoop  = 3.5 // an inner loop's line offset changed
	WeightInnerCross = 4   // an inner loop crosses a line in one build only
)

// Name returns the symbol's name in B.
func (c *Change) Name() string { return c.B.Name }

// Shift returns B's address minus A's.
func (c *Change) Shift() int64 { return int64(c.B.Addr - c.A.Addr) }

// Off64Changed reports whether the offset inside the 64-byte line changed.
func (c *Change) Off64Changed() bool { return c.A.Off(64) != c.B.Off(64) }

// LinesChanged reports whether the number of 64-byte lines touched changed.
func (c *Change) LinesChanged() bool { return c.A.Lines() != c.B.Lines() }

// LoopChange is one loop of a function in both builds.
type LoopChange struct {
	// Index is the loop's 1-based position in the function, by start.
	Index int
	// A and B place the loop in each build; one is nil when the loop is
	// found in one build only.
	A, B *LoopPos
}

// Changed reports whether the loop's line offset or crossing changed.
func (l *LoopChange) Changed() bool {
	if l.A == nil || l.B == nil {
		return true
	}
	return l.A.LineOff != l.B.LineOff || l.A.Crosses != l.B.Crosses
}

// Inner reports whether the loop holds no other loop (in either build).
func (l *LoopChange) Inner() bool {
	return (l.A == nil || l.A.Inner) && (l.B == nil || l.B.Inner)
}

// LoopPos is where a loop sits in one build.
type LoopPos struct {
	Start, End uint64 // first instruction; just past the backward branch
	FuncOff    uint64 // Start minus the function's address
	LineOff    uint64 // Start mod 64: the offset inside its cache line
	Len        int    // bytes
	Depth      int    // 0 for an outermost loop
	Inner      bool   // holds no other loop
	Crosses    bool   // spans a 64-byte line boundary
	Lines      int    // 64-byte lines touched
	Source     string // "file:line" of the first instruction, when known
}

// Run is a maximal sequence of consecutive symbols of one section of B
// that all moved by the same amount.
type Run struct {
	Section string
	Shift   int64
	// Jump is Shift minus the shift of the run before (or, for a
	// section's first run, minus 0).
	Jump        int64
	First, Last *Change
	Count       int
	// Prev is the symbol of B just before First (matched or added), nil
	// when First starts the section: the place where padding would go.
	Prev *Symbol
	// Causes explain Jump: what was added, removed or resized between the
	// previous run and this one, or the section moving or padding.
	Causes []Cause
}

// Bytes returns the number of bytes the run spans in B.
func (r *Run) Bytes() uint64 { return r.Last.B.End() - r.First.B.Addr }

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
)

var causeNames = [...]string{"added", "removed", "resized", "reordered", "section moved", "realigned"}

// String returns the kind in words: "added", "removed", "resized",
// "reordered", "section moved" or "realigned".
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
	// reordered (from B); nil for SectionMoved and Realigned.
	Symbol *Symbol
	// Bytes is the cause's contribution to the shift: +size for Added,
	// -size for Removed, the size change for Resized, the section's move
	// for SectionMoved, the rest for Realigned.
	Bytes int64
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
	}
	return c.Kind.String()
}

// SharedLine is a pair of writable objects that share a 64-byte line in
// one build only.
type SharedLine struct {
	X, Y *Change
	// Gained is true when they share a line in B but not in A.
	Gained bool
	// Line is the address of the shared line in the build where they
	// share one.
	Line uint64
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
	d := &DiffResult{A: a, B: b, Ranking: "alignment"}
	if opt.Hot != nil {
		d.Ranking, d.Profile = "profile", opt.Hot.Source
	} else {
		d.Notes = append(d.Notes, "no profile given: ranked by alignment-class change (pass a profile to rank by hotness)")
	}
	if a.Format == "system.map" || b.Format == "system.map" {
		d.Notes = append(d.Notes, "symbol map input: sizes are guessed from the next symbol's address (they include padding), and there are no loops or source lines")
	}
	if a.Arch != b.Arch && a.Arch != "" && b.Arch != "" {
		d.Notes = append(d.Notes, fmt.Sprintf("the builds are for different machines (%s, %s)", a.Arch, b.Arch))
	}

	matchA, matchB := match(a, b)
	d.buildChanges(matchA, matchB)
	d.compareSections()
	d.findRuns(matchA, matchB)
	d.findShared()
	d.rank(opt)
	d.analyse(opt)
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

// maxListed bounds how many added or removed symbols a run's causes name
// one by one; the rest are summed into one cause. maxScan bounds how far
// the search for removed symbols walks, so that builds with shuffled
// layouts (lld --shuffle-sections, go -ldflags=-randlayout) stay linear.
const (
	maxListed = 16
	maxScan   = 4096
)

// runScan holds, for build A, prefix counts and byte sums of the symbols
// with no partner in B, to total a range's removed symbols in O(1).
type runScan struct {
	matchA, matchB []int32
	unCount        []int32 // unCount[i]: unmatched symbols in A.Symbols[:i]
	unBytes        []int64 // their sizes
	alCount        []int32 // alCount[i]: aliasOnly symbols in A.Symbols[:i]
}

// findRuns groups the changes of each section into shift runs and names
// the cause of each.
func (d *DiffResult) findRuns(matchA, matchB []int32) {
	sc := &runScan{matchA: matchA, matchB: matchB,
		unCount: make([]int32, len(matchA)+1), unBytes: make([]int64, len(matchA)+1),
		alCount: make([]int32, len(matchA)+1)}
	for i, m := range matchA {
		sc.unCount[i+1], sc.unBytes[i+1], sc.alCount[i+1] = sc.unCount[i], sc.unBytes[i], sc.alCount[i]
		switch m {
		case unmatched:
			sc.unCount[i+1]++
			sc.unBytes[i+1] += int64(d.A.Symbols[i].Size)
		case aliasOnly:
			sc.alCount[i+1]++
		}
	}
	var cur *Run
	for i := range d.Changes {
		c := &d.Changes[i]
		sh := c.Shift()
		if cur != nil && cur.Last.B.Section == c.B.Section && cur.Shift == sh {
			cur.Last = c
			cur.Count++
			c.Run = len(d.Runs) - 1
			continue
		}
		var prev *Change
		if cur != nil && cur.Last.B.Section == c.B.Section {
			prev = cur.Last
		}
		d.Runs = append(d.Runs, Run{Section: c.B.Section.Name, Shift: sh, First: c, Last: c, Count: 1})
		cur = &d.Runs[len(d.Runs)-1]
		c.Run = len(d.Runs) - 1
		d.explain(cur, prev, sc)
	}
}

// explain fills in r.Prev, r.Jump and r.Causes from what lies between the
// previous run's last symbol (prev, nil at the section start) and the
// run's first symbol, in both builds.
func (d *DiffResult) explain(r *Run, prev *Change, sc *runScan) {
	a, b := d.A, d.B
	f := r.First
	if f.ib > 0 && b.Symbols[f.ib-1].Section == f.B.Section {
		r.Prev = &b.Symbols[f.ib-1]
	}
	var prevShift int64
	if prev != nil {
		prevShift = prev.Shift()
	}
	r.Jump = r.Shift - prevShift
	var sum int64

	// Section start moved (first run only).
	if prev == nil {
		if sa := a.section(f.B.Section.Name); sa != nil && sa.Addr != f.B.Section.Addr {
			mv := int64(f.B.Section.Addr - sa.Addr)
			r.Causes = append(r.Causes, Cause{Kind: SectionMoved, Bytes: mv, Count: 1})
			sum += mv
		}
	}
	// Added in B: the symbols between prev and f, all unmatched since prev
	// and f are consecutive matched symbols of B.
	lo := int32(-1)
	if prev != nil {
		lo = prev.ib
	} else {
		lo = f.ib - 1
		for lo >= 0 && b.Symbols[lo].Section == f.B.Section {
			lo--
		}
	}
	more := Cause{Kind: Added}
	for i := lo + 1; i < f.ib; i++ {
		if sc.matchB[i] != unmatched {
			continue
		}
		s := &b.Symbols[i]
		sum += int64(s.Size)
		if more.Count == 0 && len(r.Causes) < maxListed {
			r.Causes = append(r.Causes, Cause{Kind: Added, Symbol: s, Bytes: int64(s.Size), Count: 1})
		} else {
			more.Count++
			more.Bytes += int64(s.Size)
		}
	}
	if more.Count > 0 {
		r.Causes = append(r.Causes, more)
	}
	// Removed from A: unmatched symbols of A between prev and f in A.
	// Matched ones found there moved elsewhere in B: reordered.
	switch {
	case f.A.Section.Name != f.B.Section.Name:
		r.Causes = append(r.Causes, Cause{Kind: Reordered, Symbol: f.B, Count: 1})
	case prev != nil && (prev.A.Section != f.A.Section || prev.ia > f.ia):
		r.Causes = append(r.Causes, Cause{Kind: Reordered, Symbol: f.B, Count: 1})
	default:
		loA := int32(-1)
		if prev != nil {
			loA = prev.ia
		} else {
			loA = f.ia - 1
			for loA >= 0 && a.Symbols[loA].Section == f.A.Section {
				loA--
			}
		}
		from, to := loA+1, f.ia
		nUn := sc.unCount[to] - sc.unCount[from]
		bytesUn := sc.unBytes[to] - sc.unBytes[from]
		sum -= bytesUn
		var listed int32
		var listedBytes int64
		var moved *Symbol
		for i := from; i < to && i-from < maxScan && listed < nUn; i++ {
			s := &a.Symbols[i]
			switch {
			case sc.matchA[i] == aliasOnly:
				// an empty label B has under another name
			case sc.matchA[i] >= 0:
				if moved == nil {
					moved = &b.Symbols[sc.matchA[i]]
				}
			case listed < maxListed:
				r.Causes = append(r.Causes, Cause{Kind: Removed, Symbol: s, Bytes: -int64(s.Size), Count: 1})
				listed++
				listedBytes += int64(s.Size)
			default:
				i = to // enough listed; the rest is summed below
			}
		}
		if rest := nUn - listed; rest > 0 {
			r.Causes = append(r.Causes, Cause{Kind: Removed, Bytes: -(bytesUn - listedBytes), Count: int(rest)})
		}
		if nMatched := (to - from) - nUn - (sc.alCount[to] - sc.alCount[from]); nMatched > 0 {
			r.Causes = append(r.Causes, Cause{Kind: Reordered, Symbol: moved, Count: int(nMatched)})
		}
	}
	// The symbol just before changed size.
	if prev != nil && prev.A.Size != prev.B.Size {
		delta := int64(prev.B.Size - prev.A.Size)
		r.Causes = append(r.Causes, Cause{Kind: Resized, Symbol: prev.B, Bytes: delta, Count: 1})
		sum += delta
	}
	if rest := r.Jump - sum; rest != 0 && !hasReorder(r.Causes) {
		r.Causes = append(r.Causes, Cause{Kind: Realigned, Bytes: rest, Count: 1})
	}
}

func hasReorder(cs []Cause) bool {
	for _, c := range cs {
		if c.Kind == Reordered {
			return true
		}
	}
	return false
}

// findShared lists the pairs of matched writable objects that share a
// 64-byte line in one build but not in the other.
func (d *DiffResult) findShared() {
	var objs []int32 // change indices of writable objects
	for i := range d.Changes {
		c := &d.Changes[i]
		if c.A.Kind == Object && c.B.Kind == Object && c.A.Size > 0 && c.B.Size > 0 && c.A.Writable() && c.B.Writable() {
			objs = append(objs, int32(i))
		}
	}
	pairsA := d.sharedPairs(objs, func(c *Change) *Symbol { return c.A })
	pairsB := d.sharedPairs(objs, func(c *Change) *Symbol { return c.B })
	i, j := 0, 0
	for i < len(pairsA) || j < len(pairsB) {
		switch {
		case j == len(pairsB) || (i < len(pairsA) && pairsA[i].key < pairsB[j].key):
			p := pairsA[i]
			d.Shared = append(d.Shared, SharedLine{X: &d.Changes[p.key>>32], Y: &d.Changes[p.key&0xffffffff], Line: p.line})
			i++
		case i == len(pairsA) || pairsB[j].key < pairsA[i].key:
			p := pairsB[j]
			d.Shared = append(d.Shared, SharedLine{X: &d.Changes[p.key>>32], Y: &d.Changes[p.key&0xffffffff], Line: p.line, Gained: true})
			j++
		default:
			i++
			j++
		}
	}
	for _, s := range d.Shared {
		if s.Gained {
			d.Stats.SharedGained++
		} else {
			d.Stats.SharedLost++
		}
	}
}

type linePair struct{ key, line uint64 }

// maxSharedScan bounds the objects looked at after each object: at most
// 64 non-overlapping objects start in one line, and the bound keeps
// inputs with many overlapping objects linear.
const maxSharedScan = 256

// sharedPairs returns, sorted by key, the pairs of objects (as change
// indices packed lo<<32|hi) that share a 64-byte line in the build side
// picks.
func (d *DiffResult) sharedPairs(objs []int32, side func(*Change) *Symbol) []linePair {
	sorted := append([]int32(nil), objs...)
	slices.SortFunc(sorted, func(i, j int32) int {
		return cmp.Compare(side(&d.Changes[i]).Addr, side(&d.Changes[j]).Addr)
	})
	var pairs []linePair
	for i, ci := range sorted {
		si := side(&d.Changes[ci])
		lastLine := (si.End() - 1) / LineSize
		for k, cj := range sorted[i+1:] {
			sj := side(&d.Changes[cj])
			first := sj.Addr / LineSize
			if first > lastLine || k >= maxSharedScan {
				break
			}
			if sj.Addr < si.End() {
				continue // overlapping objects (unions, aliases), not two neighbours
			}
			lo, hi := uint64(ci), uint64(cj)
			if lo > hi {
				lo, hi = hi, lo
			}
			pairs = append(pairs, linePair{key: lo<<32 | hi, line: first * LineSize})
		}
	}
	slices.SortFunc(pairs, func(x, y linePair) int { return cmp.Compare(x.key, y.key) })
	return pairs
}

// classWeight grades how much a symbol's placement class changed.
func classWeight(a, b *Symbol) float64 {
	switch {
	case a.Lines() != b.Lines() || a.Straddles() != b.Straddles():
		return WeightLines
	case a.Off(32) != b.Off(32):
		return WeightOff32
	case a.Off(64) != b.Off(64):
		return WeightOff64
	case a.Off(4096) != b.Off(4096):
		return WeightPage
	}
	return WeightNone
}

// loopWeight grades the loop changes of an analysed function.
func loopWeight(loops []LoopChange) float64 {
	w := 0.0
	for i := range loops {
		l := &loops[i]
		if l.A == nil || l.B == nil || !l.Changed() {
			continue
		}
		var lw float64
		switch {
		case l.Inner() && l.A.Crosses != l.B.Crosses:
			lw = WeightInnerCross
		case l.Inner():
			lw = WeightInnerLoop
		default:
			lw = WeightOuterLoop
		}
		w = max(w, lw)
	}
	return w
}

// rank scores every change and fills d.Ranked.
func (d *DiffResult) rank(opt DiffOptions) {
	// Profile lookups clean and regex-match names; most symbols are not in
	// the profile, so filter by base name first.
	var inProfile map[string]bool
	if opt.Hot != nil {
		inProfile = make(map[string]bool, len(opt.Hot.Funcs))
		for fn := range opt.Hot.Funcs {
			inProfile[BaseName(fn)] = true
		}
	}
	mayBeHot := func(s *Symbol) bool {
		if inProfile[BaseName(s.Name)] {
			return true
		}
		for _, al := range s.Aliases {
			if inProfile[BaseName(al)] {
				return true
			}
		}
		return false
	}
	cold := 0
	for i := range d.Changes {
		c := &d.Changes[i]
		c.Weight = classWeight(c.A, c.B)
		if c.A.Size == 0 && c.B.Size == 0 {
			c.Weight = min(c.Weight, WeightPage) // a label: no bytes to slow down
		}
		if c.Weight > WeightPage && (coldTable(c.A) || coldTable(c.B)) {
			c.Weight = WeightPage // read at boot or module load only
			cold++
		}
		if opt.Hot != nil && c.B.Kind == Func && (mayBeHot(c.B) || mayBeHot(c.A)) {
			c.Hot = opt.Hot.Of(c.B.Name)
			if c.Hot == 0 && c.A.Name != c.B.Name {
				c.Hot = opt.Hot.Of(c.A.Name)
			}
			for _, al := range c.B.Aliases {
				if c.Hot != 0 {
					break
				}
				c.Hot = opt.Hot.Of(al)
			}
		}
	}
	if cold > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d changes in kernel tables no hot path reads (.init.*, __ksymtab*, __param, .notes, ...) ranked last", cold))
	}
	d.sortRanked(opt.Hot != nil)
}

func (d *DiffResult) sortRanked(withProfile bool) {
	d.Ranked = d.Ranked[:0]
	for i := range d.Changes {
		c := &d.Changes[i]
		if withProfile {
			// A hot function that only moved within its page keeps its
			// lines: it ranks with the unprofiled changes, by weight.
			c.Score = 0
			if c.Weight >= WeightOff64 {
				c.Score = c.Hot * c.Weight
			}
		} else {
			c.Score = c.Weight
		}
		if c.Weight > 0 || c.Hot > 0 {
			d.Ranked = append(d.Ranked, c)
		}
	}
	slices.SortStableFunc(d.Ranked, func(x, y *Change) int {
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Weight, x.Weight); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Hot, x.Hot); c != 0 {
			return c
		}
		return cmp.Compare(x.B.Kind, y.B.Kind) // functions first, then B's address order
	})
}

// analyse finds the loops and source lines of the top-ranked, hottest and
// requested symbols, then re-ranks with the loop changes.
func (d *DiffResult) analyse(opt DiffOptions) {
	var todo []*Change
	seen := map[*Change]bool{}
	add := func(c *Change) {
		if !seen[c] {
			seen[c] = true
			todo = append(todo, c)
		}
	}
	for i, c := range d.Ranked {
		if i >= opt.Top {
			break
		}
		add(c)
	}
	if opt.Hot != nil {
		var hot []*Change
		for i := range d.Changes {
			if d.Changes[i].Hot > 0 {
				hot = append(hot, &d.Changes[i])
			}
		}
		sort.SliceStable(hot, func(i, j int) bool { return hot[i].Hot > hot[j].Hot })
		for i, c := range hot {
			if i >= opt.Top {
				break
			}
			add(c)
		}
	}
	if len(opt.Symbols) > 0 {
		want := map[string]bool{}
		for _, s := range opt.Symbols {
			want[s] = true
		}
		for i := range d.Changes {
			c := &d.Changes[i]
			if want[c.A.Name] || want[c.B.Name] {
				add(c)
			}
		}
	}
	var loopErrA, loopErrB error
	noCode := d.A.Format != "elf" || d.B.Format != "elf" // said once in the notes
	if !noCode && (d.A.machine != uint16(elf.EM_X86_64) || d.B.machine != uint16(elf.EM_X86_64)) {
		noCode = true
		d.Notes = append(d.Notes, fmt.Sprintf("loops: finding loops in %s code is not supported yet (x86-64 only)", d.B.Arch))
	}
	for _, c := range todo {
		c.Analysed = true
		if c.B.Kind != Func || noCode {
			continue
		}
		var la, lb []LoopPos
		la, loopErrA = d.A.loops(c.A)
		lb, loopErrB = d.B.loops(c.B)
		switch {
		case loopErrA != nil:
			c.LoopsNote = "A: " + loopErrA.Error()
		case loopErrB != nil:
			c.LoopsNote = "B: " + loopErrB.Error()
		default:
			c.Loops = pairLoops(la, lb)
			if len(c.Loops) == 0 {
				c.LoopsNote = "no loops"
			}
		}
		c.Weight = max(c.Weight, loopWeight(c.Loops))
	}
	if !opt.NoSource {
		d.sources(todo, opt.MaxDWARF)
	}
	d.sortRanked(opt.Hot != nil)
}

// pairLoops pairs the loops of a function's two builds. With as many loops
// in both they pair by position; otherwise by the longest common
// subsequence of (length, depth), so that a loop added in between does not
// shift every pairing (by position again when nothing is in common). Loops
// left over get a nil partner. Index numbers the pairs in order.
func pairLoops(la, lb []LoopPos) []LoopChange {
	same := func(x, y *LoopPos) bool { return x.Len == y.Len && x.Depth == y.Depth }
	byPosition := func() []LoopChange {
		var out []LoopChange
		for i := 0; i < max(len(la), len(lb)); i++ {
			var lc LoopChange
			if i < len(la) {
				lc.A = &la[i]
			}
			if i < len(lb) {
				lc.B = &lb[i]
			}
			out = append(out, lc)
		}
		return numberLoops(out)
	}
	if len(la) == len(lb) || len(la) == 0 || len(lb) == 0 || len(la)*len(lb) > 1<<16 {
		return byPosition()
	}
	// LCS table: l[i][j] is the LCS length of la[i:] and lb[j:].
	n, m := len(la), len(lb)
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if same(&la[i], &lb[j]) {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	if l[0][0] == 0 {
		return byPosition()
	}
	var out []LoopChange
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && same(&la[i], &lb[j]) && l[i][j] == l[i+1][j+1]+1:
			out = append(out, LoopChange{A: &la[i], B: &lb[j]})
			i++
			j++
		case j < m && (i == n || l[i][j+1] >= l[i+1][j]):
			out = append(out, LoopChange{B: &lb[j]})
			j++
		default:
			out = append(out, LoopChange{A: &la[i]})
			i++
		}
	}
	return numberLoops(out)
}

func numberLoops(ls []LoopChange) []LoopChange {
	for i := range ls {
		ls[i].Index = i + 1
	}
	return ls
}

// sources sets the source lines of the analysed changes and their loops.
func (d *DiffResult) sources(todo []*Change, maxDWARF int64) {
	if len(todo) == 0 {
		return
	}
	tb := d.B.loadDWARF(maxDWARF)
	ta := d.A.loadDWARF(maxDWARF)
	if tb.err != nil && d.B.Format == "elf" {
		d.Notes = append(d.Notes, "source lines: "+tb.err.Error())
	}
	want := map[uint64]bool{}
	for _, c := range todo {
		if c.B.Kind == Object {
			want[c.B.Addr] = true
		}
	}
	if len(want) > 0 {
		tb.varLines(want)
	}
	for _, c := range todo {
		if c.B.Kind == Object {
			c.Source = tb.vars[c.B.Addr]
			continue
		}
		c.Source = tb.pcLine(c.B.Addr)
		for i := range c.Loops {
			if l := c.Loops[i].A; l != nil {
				l.Source = ta.pcLine(l.Start)
			}
			if l := c.Loops[i].B; l != nil {
				l.Source = tb.pcLine(l.Start)
			}
		}
	}
}
