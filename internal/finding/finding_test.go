package finding

import (
	"slices"
	"testing"
)

func TestGroupByCause(t *testing.T) {
	fs := []*Finding{
		{Culprit: "a", LayoutCause: "k in .text"},
		{Culprit: "b"},
		{Culprit: "c", LayoutCause: "obj in .bss"},
		{Culprit: "d", LayoutCause: "k in .text"},
		{Culprit: "e", LayoutCause: "obj in .bss"},
	}
	if got := GroupByCause(fs); !slices.Equal(got, []int{0, 3, 1, 2, 4}) {
		t.Errorf("order %v, want [0 3 1 2 4]", got)
	}
}

// TestMergeAndPolicy: one finding per culprit gathers every job and
// metric once; a real regression found later becomes the main metric; the
// report policy tells what it asks for.
func TestMergeAndPolicy(t *testing.T) {
	f := &Finding{Culprit: "c", Job: "j1", Metric: "a", Verdict: "text-alignment",
		Metrics: []MetricChange{{Job: "j1", Metric: "a", Verdict: "text-alignment"}}}
	if f.Kind() != Artifact || f.Reported("regressions") || f.Reported("changes") || !f.Reported("all") {
		t.Errorf("artifact: kind %s, reported %v %v %v", f.Kind(), f.Reported("regressions"), f.Reported("changes"), f.Reported("all"))
	}
	f.Merge(&Finding{Culprit: "c", Job: "j2", Metric: "b", Change: 12, Verdict: "real-regression",
		Metrics: []MetricChange{{Job: "j2", Metric: "b", Change: 12, Verdict: "real-regression"}}})
	f.Merge(&Finding{Culprit: "c", Job: "j2", Metric: "b", Verdict: "real-regression",
		Metrics: []MetricChange{{Job: "j2", Metric: "b", Verdict: "real-regression"}}})
	if len(f.Metrics) != 2 || f.Metric != "b" || f.Metrics[0].Metric != "b" || f.Kind() != Regression || !f.Reported("regressions") {
		t.Errorf("merged finding %+v", f)
	}
}
