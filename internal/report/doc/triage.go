// The JSON report of a triage.

package doc

import (
	"encoding/json"
	"fmt"

	"github.com/perfbot/perfbot/internal/verdict"
)

// Triage is the JSON report of a triage (perfbot triage -f json, and a
// stored finding's triage_report).
type Triage struct {
	Version      int                 `json:"version"`
	Verdict      verdict.Verdict     `json:"verdict"`
	Real         bool                `json:"real"`
	Sentence     string              `json:"sentence"`
	Metric       TriageMetric        `json:"metric"`
	Job          string              `json:"job"`
	Preset       string              `json:"preset"`
	Base         TriageCommit        `json:"base"`
	Changed      TriageCommit        `json:"changed"`
	Change       *float64            `json:"change"`
	Robust       *TriageRobust       `json:"robust,omitempty"`
	Disagreement string              `json:"disagreement,omitempty"`
	DecidedBy    []string            `json:"decided_by"`
	Identical    bool                `json:"identical"`
	Experiments  []TriageExperiment  `json:"experiments"`
	Suspects     []Suspect           `json:"suspects"`
	Padding      string              `json:"padding,omitempty"`
	SourcePatch  *TriagePatch        `json:"source_patch,omitempty"`
	Notes        []string            `json:"notes"`
	Instructions *TriageInstructions `json:"instructions,omitempty"`
	Budget       TriageBudget        `json:"budget"`
	Resumed      bool                `json:"resumed"`
}

type TriagePatch struct {
	Root      string   `json:"root"`
	Suspect   string   `json:"suspect"`
	File      string   `json:"file"`
	Line      int      `json:"line"`
	Section   string   `json:"section"`
	Bytes     uint64   `json:"bytes"`
	Align     uint64   `json:"align"`
	Exact     bool     `json:"exact"`
	Check     string   `json:"check"`
	Restored  bool     `json:"restored"`
	Identical bool     `json:"identical"`
	Notes     []string `json:"notes"`
	Diff      string   `json:"diff"`
}

type TriageMetric struct {
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Better string `json:"better"`
}

type TriageCommit struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
}

type TriageRobust struct {
	Layouts            int      `json:"layouts"`
	Change             *float64 `json:"change"`
	Lo                 *float64 `json:"lo"`
	Hi                 *float64 `json:"hi"`
	P                  *float64 `json:"p"`
	Confidence         *float64 `json:"confidence"`
	Significant        bool     `json:"significant"`
	SensitivityBase    *float64 `json:"sensitivity_base"`
	SensitivityChanged *float64 `json:"sensitivity_changed"`
	LayoutP            *float64 `json:"layout_p"`
	WithinCV           *float64 `json:"within_cv"`
}

type TriageExperiment struct {
	Name       string         `json:"name"`
	Title      string         `json:"title"`
	Outcome    string         `json:"outcome"`
	Change     *float64       `json:"change"`
	Lo         *float64       `json:"lo"`
	Hi         *float64       `json:"hi"`
	P          *float64       `json:"p"`
	Confidence *float64       `json:"confidence"`
	Runs       int            `json:"runs"`
	Looks      int            `json:"looks"`
	Reason     string         `json:"reason"`
	Columns    []TriageColumn `json:"columns"`
	Layouts    []TriageLayout `json:"layouts,omitempty"`
}

type TriageColumn struct {
	Label   string   `json:"label"`
	Commit  string   `json:"commit"`
	Variant string   `json:"variant"`
	N       int      `json:"n"`
	Failed  int      `json:"failed"`
	Median  *float64 `json:"median"`
	Change  *float64 `json:"change,omitempty"`
	// Values are the runs' values, sorted.
	Values []float64 `json:"values"`
}

type TriageLayout struct {
	Variant string   `json:"variant"`
	Base    *float64 `json:"base"`
	Changed *float64 `json:"changed"`
	Change  *float64 `json:"change"`
	N       int      `json:"n"`
	// BaseValues and ChangedValues are the runs' values under the layout.
	BaseValues    []float64 `json:"base_values"`
	ChangedValues []float64 `json:"changed_values"`
}

type TriageBudget struct {
	Runs        int     `json:"runs"`
	NewRuns     int     `json:"new_runs"`
	Builds      int     `json:"builds"`
	NewBuilds   int     `json:"new_builds"`
	FixedRuns   int     `json:"fixed_runs"`
	WallSeconds float64 `json:"wall_seconds"`
}

// Suspect is one symbol of the layout diff's ranking: its place in its
// 64-byte cache line before and after the change.
type Suspect struct {
	Name         string `json:"name"`
	Kind         string `json:"kind"` // "func" (code) or "object" (data)
	Section      string `json:"section"`
	OffsetBefore uint64 `json:"offset_before"` // mod 64, in the base build
	OffsetAfter  uint64 `json:"offset_after"`  // mod 64, in the changed build
	Why          string `json:"why"`
}

// UnmarshalJSON reads a suspect, also as triage reports before version 2
// wrote it (Go's field names: Name, Kind, Section, OffBase, OffChanged,
// Why), as findings stored then hold it.
func (s *Suspect) UnmarshalJSON(data []byte) error {
	type plain Suspect
	var v struct {
		plain
		OffBase    *uint64 `json:"OffBase"`
		OffChanged *uint64 `json:"OffChanged"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*s = Suspect(v.plain)
	if v.OffBase != nil {
		s.OffsetBefore = *v.OffBase
	}
	if v.OffChanged != nil {
		s.OffsetAfter = *v.OffChanged
	}
	return nil
}

// DecodeTriage reads a triage report of any version (before version 2 it
// had no "version" and Go-named suspects).
func DecodeTriage(data []byte) (*Triage, error) {
	var t Triage
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("triage report: %w", err)
	}
	if t.Version > TriageVersion {
		return &t, fmt.Errorf("triage report version %d: this perfbot reads up to version %d", t.Version, TriageVersion)
	}
	return &t, nil
}

// TriageInstructions is the instruction counts' evidence (a job with
// `builtin: instructions`): the plain builds' counts against the change.
type TriageInstructions struct {
	Metric       string   `json:"metric"`
	Base         float64  `json:"base"`
	Changed      float64  `json:"changed"`
	Change       *float64 `json:"change"`
	MetricChange *float64 `json:"metric_change"`
	Supports     string   `json:"supports"`
	Text         string   `json:"text"`
}
