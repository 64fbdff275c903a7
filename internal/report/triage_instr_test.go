package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil/schematest"
	"github.com/perfbot/perfbot/internal/triage"
)

// TestTriageInstructions: the instruction counts' evidence is one line of
// the text and Markdown reports and the instructions object of the JSON
// report, which the schema documents; a triage without it prints nothing
// of it.
func TestTriageInstructions(t *testing.T) {
	r := triageSeedResult()
	line := "t_ms changed +30.1%, instructions did not (+0.000%, 459972 -> 459972; instruction counts are blind to alignment): supports an alignment artifact"
	r.Instructions = &triage.InstructionEvidence{Metric: "instructions", Base: 459972, Changed: 459972, MetricPct: 30.1,
		Supports: triage.SupportsAlignment, Text: line}
	for format, want := range map[Format]string{FormatText: "instructions: " + line + "\n", FormatMarkdown: "Instructions: " + triageMDEscape(line) + ".\n"} {
		var b bytes.Buffer
		if err := WriteTriage(&b, r, TriageOptions{Format: format}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s report lacks %q:\n%s", format, want, b.String())
		}
	}
	var b bytes.Buffer
	if err := WriteTriage(&b, r, TriageOptions{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	schematest.ValidateJSON(t, "triage", b.Bytes())
	if !strings.Contains(b.String(), `"supports": "alignment"`) {
		t.Errorf("JSON lacks the evidence:\n%s", b.String())
	}
	r.Instructions = nil
	b.Reset()
	if err := WriteTriage(&b, r, TriageOptions{Format: "text"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "instructions:") {
		t.Error("a triage without counts prints an instructions line")
	}
}
