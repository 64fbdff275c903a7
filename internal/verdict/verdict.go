// Package verdict is perfbot's one vocabulary of verdicts: what a triage
// decided about a change (a real regression or improvement, an alignment
// artifact, no change, or not settled), with the word a reader sees, the
// badge the dashboard shows, and the predicates every layer (triage,
// bisect, watch's findings, history, the dashboard) asks of a verdict.
// It imports nothing of perfbot, so that every layer can read it.
package verdict

import (
	"fmt"
	"strings"
)

// Verdict is the outcome of a triage. Its values are stable identifiers:
// JSON output, stored findings and exit statuses rely on them. In JSON a
// verdict is its plain identifier; a stored value that is not one of the
// constants reads back as it is (see [Verdict.Known]) and is written back
// the same, so nothing stored is lost.
type Verdict string

// The verdicts.
const (
	// RealRegression: the change is significant across layouts and makes
	// the metric worse.
	RealRegression Verdict = "real-regression"
	// RealImprovement: significant across layouts, and better.
	RealImprovement Verdict = "real-improvement"
	// TextAlignment: the change comes from where code sits in its cache
	// lines: it vanishes under forced alignment or when the moved
	// function's offset is restored.
	TextAlignment Verdict = "text-alignment"
	// DataAlignment: the change comes from where data sits in its cache
	// lines: it vanishes when the moved object's offset is restored.
	DataAlignment Verdict = "data-alignment"
	// NoChange: no change of the smallest effect that counts or more,
	// across layouts (or the builds are byte-identical and the runs
	// agree), and the builds fail equally often.
	NoChange Verdict = "no-change"
	// Inconclusive: the experiments within the budget do not settle it,
	// most runs of a build failed, or the builds fail at different rates
	// while the timings show no change.
	Inconclusive Verdict = "inconclusive"
	// None is the zero value: no verdict yet (a finding recorded before
	// its triage, a bisection that did not triage its culprit).
	None Verdict = ""
)

// All lists every verdict, in the order of the constants (None left out).
var All = []Verdict{RealRegression, RealImprovement, TextAlignment, DataAlignment, NoChange, Inconclusive}

// words are what a reader sees for each verdict.
var words = map[Verdict]string{
	RealRegression:  "real regression",
	RealImprovement: "real improvement",
	TextAlignment:   "text alignment",
	DataAlignment:   "data alignment",
	NoChange:        "no change",
	Inconclusive:    "inconclusive",
	None:            "no verdict",
}

// Known reports whether v is one of the constants (None included).
func (v Verdict) Known() bool {
	_, ok := words[v]
	return ok
}

// Word is what a reader sees: "real regression", "no verdict" for None;
// a value that is not one of the constants reads as itself.
func (v Verdict) Word() string {
	if w, ok := words[v]; ok {
		return w
	}
	return string(v)
}

// String is the stable identifier ("real-regression").
func (v Verdict) String() string { return string(v) }

// IsReal reports whether the verdict is a real change.
func (v Verdict) IsReal() bool { return v == RealRegression || v == RealImprovement }

// IsRegression reports whether the verdict is a real regression.
func (v Verdict) IsRegression() bool { return v == RealRegression }

// IsImprovement reports whether the verdict is a real improvement.
func (v Verdict) IsImprovement() bool { return v == RealImprovement }

// IsArtifact reports whether the verdict is an alignment artifact: the
// change comes from where code or data sits, not from what it does.
func (v Verdict) IsArtifact() bool { return v == TextAlignment || v == DataAlignment }

// IsNoChange reports whether the verdict is "no change".
func (v Verdict) IsNoChange() bool { return v == NoChange }

// IsSettled reports whether the verdict decides the change: every known
// verdict but Inconclusive and None.
func (v Verdict) IsSettled() bool { return v.Known() && v != Inconclusive && v != None }

// Badge is how the dashboard shows a verdict: its label, and the CSS
// class that colours it (the dashboard's style.css has a rule for each).
type Badge struct {
	Label string
	Class string
}

// Badge is the verdict's badge: its word, and class "v-" followed by the
// identifier ("v-real-regression"), "v-none" for None and "v-unknown" for
// a value that is not one of the constants.
func (v Verdict) Badge() Badge {
	switch {
	case v == None:
		return Badge{Label: v.Word(), Class: "v-none"}
	case !v.Known():
		return Badge{Label: v.Word(), Class: "v-unknown"}
	}
	return Badge{Label: v.Word(), Class: "v-" + string(v)}
}

// Parse reads a verdict as its identifier ("real-regression") or its word
// ("real regression"), in any case; an error names the valid identifiers.
func Parse(s string) (Verdict, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, v := range All {
		if t == string(v) || t == words[v] {
			return v, nil
		}
	}
	return None, fmt.Errorf("verdict %q: want one of %s", s, validWords())
}

func validWords() string {
	var b strings.Builder
	for i, v := range All {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(v))
	}
	return b.String()
}
