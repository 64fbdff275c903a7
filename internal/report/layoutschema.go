// The JSON form of a layout diff: the types WriteLayoutJSON encodes.

package report

// JSON form of a layout diff.
type (
	layoutJSON struct {
		Version     int                `json:"version"`
		A           layoutBinaryJSON   `json:"a"`
		B           layoutBinaryJSON   `json:"b"`
		Ranking     string             `json:"ranking"`
		Profile     string             `json:"profile,omitempty"`
		Stats       layoutStatsJSON    `json:"stats"`
		RootChanges []layoutRootJSON   `json:"root_changes"`
		RootsTotal  int                `json:"root_changes_total"`
		Runs        []layoutRunJSON    `json:"runs"`
		RunsTotal   int                `json:"runs_total"`
		Changes     []layoutChangeJSON `json:"changes"`
		RankedTotal int                `json:"ranked_total"`
		Shared      []layoutSharedJSON `json:"shared_lines"`
		Added       []layoutSymJSON    `json:"added"`
		Removed     []layoutSymJSON    `json:"removed"`
		Padding     *layoutPaddingJSON `json:"padding,omitempty"`
		Notes       []string           `json:"notes"`
	}
	layoutBinaryJSON struct {
		Path     string `json:"path"`
		Format   string `json:"format"`
		Arch     string `json:"arch"`
		Type     string `json:"type"`
		PIE      bool   `json:"pie"`
		Static   bool   `json:"static"`
		Go       bool   `json:"go"`
		Symbols  int    `json:"symbols"`
		Describe string `json:"describe"`
	}
	layoutStatsJSON struct {
		Matched       int `json:"matched"`
		Added         int `json:"added"`
		Removed       int `json:"removed"`
		Moved         int `json:"moved"`
		Off64Changed  int `json:"off64_changed"`
		LinesChanged  int `json:"lines_changed"`
		NewStraddles  int `json:"new_straddles"`
		LostStraddles int `json:"lost_straddles"`
		SharedGained  int `json:"shared_gained"`
		SharedLost    int `json:"shared_lost"`
	}
	layoutPlaceJSON struct {
		Name      string `json:"name"`
		Addr      string `json:"addr"`
		Size      uint64 `json:"size"`
		Section   string `json:"section"`
		Off32     uint64 `json:"off32"`
		Off64     uint64 `json:"off64"`
		Off4096   uint64 `json:"off4096"`
		Lines     int    `json:"lines"`
		Straddles bool   `json:"straddles"`
	}
	layoutChangeJSON struct {
		Rank       int              `json:"rank"`
		Name       string           `json:"name"`
		Kind       string           `json:"kind"`
		Shift      int64            `json:"shift"`
		A          layoutPlaceJSON  `json:"a"`
		B          layoutPlaceJSON  `json:"b"`
		Hot        float64          `json:"hot"`
		Weight     float64          `json:"weight"`
		Score      float64          `json:"score"`
		Why        string           `json:"why"`
		Run        int              `json:"run"`
		RootChange int              `json:"root_change,omitempty"`
		Source     string           `json:"source,omitempty"`
		Loops      []layoutLoopJSON `json:"loops,omitempty"`
		LoopsNote  string           `json:"loops_note,omitempty"`
	}
	layoutLoopJSON struct {
		Index   int                `json:"index"`
		Inner   bool               `json:"inner"`
		Changed bool               `json:"changed"`
		A       *layoutLoopPosJSON `json:"a"`
		B       *layoutLoopPosJSON `json:"b"`
	}
	layoutLoopPosJSON struct {
		Start   string `json:"start"`
		End     string `json:"end"`
		FuncOff uint64 `json:"func_off"`
		LineOff uint64 `json:"line_off"`
		Len     int    `json:"len"`
		Depth   int    `json:"depth"`
		Crosses bool   `json:"crosses"`
		Lines   int    `json:"lines"`
		Source  string `json:"source,omitempty"`
	}
	layoutRunJSON struct {
		ID      int               `json:"id"`
		Section string            `json:"section"`
		Shift   int64             `json:"shift"`
		Jump    int64             `json:"jump"`
		First   string            `json:"first"`
		Last    string            `json:"last"`
		Count   int               `json:"count"`
		Bytes   uint64            `json:"bytes"`
		Prev    string            `json:"prev,omitempty"`
		Causes  []layoutCauseJSON `json:"causes"`
		// The trace: run ids (indices among all runs) and the root
		// change's rank.
		From       int               `json:"from"`
		Root       int               `json:"root"`
		Via        []int             `json:"via,omitempty"`
		Carried    bool              `json:"carried"`
		Align      uint64            `json:"align,omitempty"`
		Tables     []layoutCauseJSON `json:"tables,omitempty"`
		RootChange int               `json:"root_change,omitempty"`
		Break      string            `json:"break,omitempty"`
	}
	layoutRootJSON struct {
		Rank         int               `json:"rank"`
		Text         string            `json:"text"`
		Causes       []layoutCauseJSON `json:"causes"`
		Roots        []int             `json:"root_runs"`
		Runs         []int             `json:"runs"`
		Moved        int               `json:"moved"`
		Bytes        uint64            `json:"bytes"`
		Hot          float64           `json:"hot,omitempty"`
		Traced       bool              `json:"traced"`
		Victims      []string          `json:"victims"`
		VictimsTotal int               `json:"victims_total"`
	}
	layoutCauseJSON struct {
		Kind      string `json:"kind"`
		Symbol    string `json:"symbol,omitempty"`
		Bytes     int64  `json:"bytes"`
		Count     int    `json:"count"`
		Text      string `json:"text"`
		Table     string `json:"table,omitempty"`
		Estimated bool   `json:"estimated,omitempty"`
		Until     string `json:"until,omitempty"`
		After     string `json:"after,omitempty"`
	}
	layoutSharedJSON struct {
		X      string `json:"x"`
		Y      string `json:"y"`
		Gained bool   `json:"gained"`
		Line   string `json:"line"`
	}
	layoutSymJSON struct {
		Name    string `json:"name"`
		Kind    string `json:"kind"`
		Section string `json:"section"`
		Addr    string `json:"addr"`
		Size    uint64 `json:"size"`
		Off64   uint64 `json:"off64"`
	}
	layoutPaddingJSON struct {
		Symbol       string `json:"symbol"`
		Section      string `json:"section"`
		Bytes        uint64 `json:"bytes"`
		OffA         uint64 `json:"off_a"`
		OffB         uint64 `json:"off_b"`
		Before       string `json:"before,omitempty"`
		After        string `json:"after,omitempty"`
		Restores     int    `json:"restores"`
		Instructions string `json:"instructions"`
		Asm          string `json:"asm"`
	}
)
