package verdict

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestWordsBadgesPredicates(t *testing.T) {
	cases := []struct {
		v                                Verdict
		word, class                      string
		real, artifact, noChange, settle bool
	}{
		{RealRegression, "real regression", "v-real-regression", true, false, false, true},
		{RealImprovement, "real improvement", "v-real-improvement", true, false, false, true},
		{TextAlignment, "text alignment", "v-text-alignment", false, true, false, true},
		{DataAlignment, "data alignment", "v-data-alignment", false, true, false, true},
		{NoChange, "no change", "v-no-change", false, false, true, true},
		{Inconclusive, "inconclusive", "v-inconclusive", false, false, false, false},
		{None, "no verdict", "v-none", false, false, false, false},
		{"weird-new-verdict", "weird-new-verdict", "v-unknown", false, false, false, false},
	}
	for _, c := range cases {
		if got := c.v.Word(); got != c.word {
			t.Errorf("%q.Word() = %q, want %q", c.v, got, c.word)
		}
		if b := c.v.Badge(); b.Label != c.word || b.Class != c.class {
			t.Errorf("%q.Badge() = %+v, want {%s %s}", c.v, b, c.word, c.class)
		}
		if c.v.IsReal() != c.real || c.v.IsArtifact() != c.artifact || c.v.IsNoChange() != c.noChange || c.v.IsSettled() != c.settle {
			t.Errorf("%q: real %v artifact %v no-change %v settled %v; want %v %v %v %v", c.v,
				c.v.IsReal(), c.v.IsArtifact(), c.v.IsNoChange(), c.v.IsSettled(), c.real, c.artifact, c.noChange, c.settle)
		}
	}
	if !RealRegression.IsRegression() || RealImprovement.IsRegression() || !RealImprovement.IsImprovement() || RealRegression.IsImprovement() {
		t.Error("IsRegression/IsImprovement mix up the two real verdicts")
	}
	if len(All) != 6 {
		t.Errorf("All has %d verdicts, want 6", len(All))
	}
}

func TestParse(t *testing.T) {
	for _, v := range All {
		for _, s := range []string{string(v), v.Word(), strings.ToUpper(v.Word()), " " + string(v) + " "} {
			got, err := Parse(s)
			if err != nil || got != v {
				t.Errorf("Parse(%q) = %q, %v; want %q", s, got, err, v)
			}
		}
	}
	_, err := Parse("regression")
	if err == nil {
		t.Fatal(`Parse("regression") succeeded`)
	}
	for _, want := range []string{`"regression"`, "real-regression", "inconclusive", "no-change"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestJSON(t *testing.T) {
	type doc struct {
		V Verdict `json:"verdict"`
	}
	data, err := json.Marshal(doc{TextAlignment})
	if err != nil || string(data) != `{"verdict":"text-alignment"}` {
		t.Fatalf("marshal: %s, %v", data, err)
	}
	// A value another perfbot stored, unknown here, survives a round trip.
	var d doc
	if err := json.Unmarshal([]byte(`{"verdict":"layout-flake"}`), &d); err != nil {
		t.Fatal(err)
	}
	if d.V != "layout-flake" || d.V.Known() {
		t.Fatalf("read back %q (known %v), want the stored value kept and unknown", d.V, d.V.Known())
	}
	again, _ := json.Marshal(d)
	if string(again) != `{"verdict":"layout-flake"}` {
		t.Fatalf("written back as %s", again)
	}
}
