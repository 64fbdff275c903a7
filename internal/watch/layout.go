package watch

import (
	"encoding/json"
	"path/filepath"
	"sort"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/layout"
)

// LayoutSummary is what the history keeps of a tested commit's layout,
// beside its figures: the sizes of the first artifact's sections and the
// offsets, modulo 64, of its biggest functions, so that a step in a metric
// can be lined up with the layout move beside it.
type LayoutSummary struct {
	Artifact string            `json:"artifact"`
	Sections map[string]uint64 `json:"sections"`        // name -> size in bytes
	Offsets  map[string]uint64 `json:"offsets_mod64"`   // function -> address mod 64
	Error    string            `json:"error,omitempty"` // why there is no summary
}

// maxOffsets is how many functions a summary keeps (the biggest).
const maxOffsets = 32

// layoutSummary reads the summary of a build's first artifact; nil when
// the job names no artifact.
func layoutSummary(b *build.Result, artifacts []string) json.RawMessage {
	if b == nil || b.Record == nil || len(artifacts) == 0 {
		return nil
	}
	s := LayoutSummary{Artifact: artifacts[0], Sections: map[string]uint64{}, Offsets: map[string]uint64{}}
	bin, err := layout.Open(filepath.Join(b.Record.ArtifactDir, artifacts[0]))
	if err != nil {
		s.Error = err.Error()
	} else {
		for _, sec := range bin.Sections {
			s.Sections[sec.Name] = sec.Size
		}
		var funcs []layout.Symbol
		for _, sym := range bin.Symbols {
			if sym.Kind == layout.Func {
				funcs = append(funcs, sym)
			}
		}
		sort.SliceStable(funcs, func(i, j int) bool { return funcs[i].Size > funcs[j].Size })
		for _, f := range funcs[:min(len(funcs), maxOffsets)] {
			s.Offsets[f.Name] = f.Addr % 64
		}
	}
	data, _ := json.Marshal(s)
	return data
}
