// Change, LoopChange and LoopPos: one symbol, and each of its loops, as
// placed in both builds.

package layout

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
