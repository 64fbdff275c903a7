package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/perfbot/perfbot/internal/report/doc"
	"github.com/perfbot/perfbot/internal/sensitivity"
)

// WriteSensitivity writes a job's layout sensitivity the way the seed
// RFC's tables read: per metric the change under forced alignment with its
// interval and the range across layouts; then the size cost of forced
// alignment. Formats: text, json.
func WriteSensitivity(w io.Writer, r *sensitivity.Result, format Format) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Version int                  `json:"version"`
			Commit  string               `json:"commit"`
			Preset  string               `json:"preset"`
			Layouts []string             `json:"layouts"`
			Metrics []sensitivity.Metric `json:"metrics"`
			Sizes   []sensitivity.Size   `json:"sizes"`
		}{doc.SensitivityVersion, r.Commit.Hash, r.Preset, r.Layouts, r.Metrics, r.Sizes})
	}
	if format != "" && format != "text" {
		return fmt.Errorf("sensitivity: unknown format %q (valid: text, json)", format)
	}
	fmt.Fprintf(w, "layout sensitivity of %s (%q), %s knobs, %d layouts\n\n", r.Commit.Short(), r.Commit.Subject, r.Preset, len(r.Layouts))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tforced alignment\t\tacross layouts")
	for _, m := range r.Metrics {
		sig := ""
		if m.ForcedSignificant {
			sig = " *"
		}
		fmt.Fprintf(tw, "%s\t%+.1f%% [%+.1f%%, %+.1f%%]%s\t\t[%+.1f%%, %+.1f%%]\n", m.Name, m.Forced, m.ForcedLo, m.ForcedHi, sig, m.LayoutMin, m.LayoutMax)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Sizes) > 0 {
		var parts []string
		for _, s := range r.Sizes {
			parts = append(parts, fmt.Sprintf("%s %d -> %d (%+.1f%%)", s.Name, s.Plain, s.Forced, s.Change()))
		}
		fmt.Fprintf(w, "\nsize cost of forced alignment: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w, "\n* the change under forced alignment is significant; a change of a metric inside its ranges is suspect as an alignment artifact")
	return nil
}
