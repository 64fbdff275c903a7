// The JSON report of a source patch (perfbot layout diff --patch -f json).

package doc

// SrcPatch is a source patch that puts a moved symbol back where it was,
// and its check when one was made (--patch-check).
type SrcPatch struct {
	Version    int            `json:"version"`
	Root       string         `json:"root"`
	RootKind   string         `json:"root_kind"`
	RootSymbol string         `json:"root_symbol"`
	Suspect    string         `json:"suspect,omitempty"`
	File       string         `json:"file"`
	Line       int            `json:"line"`
	Anchor     string         `json:"anchor,omitempty"`
	AnchorLine int            `json:"anchor_line,omitempty"`
	After      bool           `json:"after"`
	Order      string         `json:"order"`
	From       string         `json:"from"`
	Name       string         `json:"name"`
	Section    string         `json:"section"`
	Bytes      uint64         `json:"bytes"`
	Align      uint64         `json:"align"`
	Exact      bool           `json:"exact"`
	Diff       string         `json:"diff"`
	Notes      []string       `json:"notes"`
	Check      *SrcPatchCheck `json:"check,omitempty"`
}

// SrcPatchCheck is what a build of the patched source shows: whether the
// moved symbols are back.
type SrcPatchCheck struct {
	Restored      bool     `json:"restored"`
	Summary       string   `json:"summary"`
	After         int      `json:"after"`
	Back          int      `json:"back"`
	NotBack       []string `json:"not_back"`
	Missing       int      `json:"missing"`
	BeforeMoved   int      `json:"before_moved"`
	PadAt         string   `json:"pad_at,omitempty"`
	PadBack       bool     `json:"pad_back"`
	SuspectBack   bool     `json:"suspect_back"`
	OtherMoved    int      `json:"other_moved"`
	OtherSections []string `json:"other_sections"`
}
