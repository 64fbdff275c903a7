// The JSON report of a triage, and the types it encodes.

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/triage"
	"github.com/perfbot/perfbot/internal/verdict"
)

// triageJSON is the JSON form of a triage; field names are stable.
type triageJSON struct {
	Verdict      verdict.Verdict   `json:"verdict"`
	Real         bool              `json:"real"`
	Sentence     string            `json:"sentence"`
	Metric       triageMetricJSON  `json:"metric"`
	Job          string            `json:"job"`
	Preset       string            `json:"preset"`
	Base         triageCommitJSON  `json:"base"`
	Changed      triageCommitJSON  `json:"changed"`
	Change       *float64          `json:"change"`
	Robust       *triageRobustJSON `json:"robust,omitempty"`
	Disagreement string            `json:"disagreement,omitempty"`
	DecidedBy    []string          `json:"decided_by"`
	Identical    bool              `json:"identical"`
	Experiments  []triageExpJSON   `json:"experiments"`
	Suspects     []triage.Suspect  `json:"suspects"`
	Padding      string            `json:"padding,omitempty"`
	SourcePatch  *triagePatchJSON  `json:"source_patch,omitempty"`
	Notes        []string          `json:"notes"`
	Budget       triageBudgetJSON  `json:"budget"`
	Resumed      bool              `json:"resumed"`
}

type triagePatchJSON struct {
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

type triageMetricJSON struct {
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Better string `json:"better"`
}

type triageCommitJSON struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
}

type triageRobustJSON struct {
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

type triageExpJSON struct {
	Name       string             `json:"name"`
	Title      string             `json:"title"`
	Outcome    string             `json:"outcome"`
	Change     *float64           `json:"change"`
	Lo         *float64           `json:"lo"`
	Hi         *float64           `json:"hi"`
	P          *float64           `json:"p"`
	Confidence *float64           `json:"confidence"`
	Runs       int                `json:"runs"`
	Looks      int                `json:"looks"`
	Reason     string             `json:"reason"`
	Columns    []triageColumnJSON `json:"columns"`
	Layouts    []triageLayoutJSON `json:"layouts,omitempty"`
}

type triageColumnJSON struct {
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

type triageLayoutJSON struct {
	Variant string   `json:"variant"`
	Base    *float64 `json:"base"`
	Changed *float64 `json:"changed"`
	Change  *float64 `json:"change"`
	N       int      `json:"n"`
	// BaseValues and ChangedValues are the runs' values under the layout.
	BaseValues    []float64 `json:"base_values"`
	ChangedValues []float64 `json:"changed_values"`
}

type triageBudgetJSON struct {
	Runs        int     `json:"runs"`
	NewRuns     int     `json:"new_runs"`
	Builds      int     `json:"builds"`
	NewBuilds   int     `json:"new_builds"`
	FixedRuns   int     `json:"fixed_runs"`
	WallSeconds float64 `json:"wall_seconds"`
}

// triageNum is x, or nil (JSON null) when not finite.
func triageNum(x float64) *float64 {
	if !finite(x) {
		return nil
	}
	return &x
}

// finiteValues is xs without NaN and infinities (which JSON cannot hold),
// never null.
func finiteValues(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if finite(x) {
			out = append(out, x)
		}
	}
	return out
}

func writeTriageJSON(w io.Writer, r *triage.Result) error {
	out := triageJSON{
		Verdict: r.Verdict, Real: r.Verdict.IsReal(), Sentence: r.Sentence,
		Metric: triageMetricJSON{Name: r.Metric, Unit: r.Unit, Better: map[bool]string{true: "higher", false: "lower"}[r.Better == metric.HigherIsBetter]},
		Job:    r.Job, Preset: r.Preset,
		Base:    triageCommitJSON{r.Base.Hash, r.Base.Subject},
		Changed: triageCommitJSON{r.Changed.Hash, r.Changed.Subject},
		Change:  triageNum(r.Change), Disagreement: r.Disagreement, Identical: r.Identical,
		Experiments: []triageExpJSON{}, Suspects: r.Suspects, Padding: r.Padding, Notes: r.Notes,
		Budget: triageBudgetJSON{Runs: r.Runs, NewRuns: r.NewRuns, Builds: r.Builds, NewBuilds: r.NewBuilds,
			FixedRuns: r.FixedRuns, WallSeconds: math.Round(r.Wall.Seconds()*10) / 10},
		Resumed: r.Resumed,
	}
	if sp := r.SourcePatch; sp != nil {
		out.SourcePatch = &triagePatchJSON{Root: sp.Root, Suspect: sp.Suspect, File: sp.File, Line: sp.Line, Section: sp.Section,
			Bytes: sp.Bytes, Align: sp.Align, Exact: sp.Exact, Check: sp.Check, Restored: sp.Restored, Identical: sp.Identical, Notes: append([]string{}, sp.Notes...), Diff: sp.Diff}
	}
	out.DecidedBy = []string{}
	for _, n := range r.DecidedBy {
		out.DecidedBy = append(out.DecidedBy, string(n))
	}
	if out.Suspects == nil {
		out.Suspects = []triage.Suspect{}
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	if rb := r.Robust; rb != nil {
		out.Robust = &triageRobustJSON{Layouts: rb.Layouts, Change: triageNum(rb.Change), Lo: triageNum(rb.Lo), Hi: triageNum(rb.Hi),
			P: triageNum(rb.P), Confidence: triageNum(rb.Confidence), Significant: rb.Significant,
			SensitivityBase: triageNum(rb.SensitivityBase), SensitivityChanged: triageNum(rb.SensitivityChanged),
			LayoutP: triageNum(rb.LayoutP), WithinCV: triageNum(rb.WithinCV)}
	}
	for _, e := range r.Experiments {
		je := triageExpJSON{Name: string(e.Name), Title: e.Title, Outcome: string(e.Outcome), Change: triageNum(e.Change), Lo: triageNum(e.Lo),
			Hi: triageNum(e.Hi), P: triageNum(e.P), Confidence: triageNum(e.Confidence), Runs: e.Runs, Looks: e.Looks, Reason: e.Reason,
			Columns: []triageColumnJSON{}}
		for i, c := range e.Columns {
			jc := triageColumnJSON{Label: c.Label, Commit: c.Commit, Variant: c.Variant, N: c.N, Failed: c.Failed, Median: triageNum(c.Median),
				Values: finiteValues(c.Values)}
			if i > 0 {
				jc.Change = triageNum(c.Change)
			}
			je.Columns = append(je.Columns, jc)
		}
		for _, l := range e.Layouts {
			je.Layouts = append(je.Layouts, triageLayoutJSON{Variant: l.Variant, Base: triageNum(l.Base), Changed: triageNum(l.Changed), Change: triageNum(l.Change), N: l.N,
				BaseValues: finiteValues(l.BaseValues), ChangedValues: finiteValues(l.ChangedValues)})
		}
		out.Experiments = append(out.Experiments, je)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("report triage json: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}
