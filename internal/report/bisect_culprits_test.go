package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/testutil"
)

// bisectEvery is a bisection that named two culprits: the main range's
// culprit was a merge, searched inside, where the real regression was; the
// range before the merge held an alignment shift; the budget (2 culprits)
// left two ranges unsearched.
func bisectEvery() *BisectReport {
	r := bisectFound()
	res := *r.Result
	merge := bisectCommit(7, "Merge branch 'topic'")
	base, tip := bisectCommit(8, "notes: log run 9"), bisectCommit(9, "text: note the head scan")
	real, realParent := bisectCommit(4, "text: re-scan the input head after each call"), bisectCommit(3, "text: count the head words")
	align, alignParent := bisectCommit(10, "bench: add text_words() helper"), bisectCommit(11, "notes: log run 12")
	cmp := func(d string, ch float64) *bisect.Comparison {
		return &bisect.Comparison{Decision: d, Change: ch, Lo: ch - 2, Hi: ch + 2, P: 0.001, Test: "mann-whitney", N: 9, RefN: 9}
	}
	check := func(ch float64) *bisect.Check {
		return &bisect.Check{Confirmed: true, Comparison: *cmp("different", ch),
			Reason: fmt.Sprintf("confirmed: in 9 fresh interleaved runs of each, the culprit differs from its parent by %+.1f%% [%+.1f%%, %+.1f%%]", ch, ch-2, ch+2)}
	}
	realC := bisect.Culprit{Commit: real, Parent: realParent, Change: 30.0, Check: check(30), Range: 1, Via: []gitrev.Commit{merge},
		Triage: &bisect.Triage{Verdict: "real-regression", Sentence: "The regression of text_ms is real."}}
	alignC := bisect.Culprit{Commit: align, Parent: alignParent, Change: 43.0, Check: check(43), Range: 2,
		Triage: &bisect.Triage{Verdict: "text-alignment", Sentence: "The change of text_ms is a text-alignment artifact."}}
	res.Culprits = []bisect.Culprit{realC, alignC}
	res.Culprit, res.Parent, res.Check, res.Triage, res.Merge = &real, &realParent, realC.Check, realC.Triage, false
	mp := bisectCommit(12, "notes: log run 40")
	res.Ranges = []bisect.Range{
		{Kind: bisect.RangeMain, Good: res.Good, Bad: res.Bad, Commits: 63, Span: [2]int{-1, 62}, Status: bisect.RangeCulprit, Ends: cmp("different", 85.9), Culprit: &merge, Parent: &mp, Merge: true, Runs: 60},
		{Kind: bisect.RangeMerge, Good: base, Bad: tip, Commits: 9, Of: &merge, Via: []gitrev.Commit{merge}, Path: 1, Span: [2]int{-1, 8}, Status: bisect.RangeCulprit, Ends: cmp("different", 30.2), Culprit: &real, Parent: &realParent, Runs: 40},
		{Kind: bisect.RangeBefore, Good: res.Good, Bad: mp, Commits: 40, Of: &merge, Span: [2]int{-1, 39}, Status: bisect.RangeCulprit, Ends: cmp("different", 43.1), Culprit: &align, Parent: &alignParent, Runs: 50},
		{Kind: bisect.RangeAfter, Good: merge, Bad: res.Bad, Commits: 22, Of: &merge, Span: [2]int{40, 62}, Status: bisect.RangeSame, Ends: cmp("same", 0.3), Runs: 4},
		{Kind: bisect.RangeBefore, Good: base, Bad: realParent, Commits: 5, Of: &real, Path: 1, Span: [2]int{-1, 4}, Status: bisect.RangeSame, Ends: cmp("same", -0.8), Runs: 3},
		{Kind: bisect.RangeAfter, Good: real, Bad: tip, Commits: 3, Of: &real, Path: 1, Span: [2]int{5, 8}, Status: bisect.RangeBudget, Note: "not searched: 2 culprits named, the most the budget allows (2)"},
	}
	res.Steps = append(append([]bisect.Step(nil), res.Steps...),
		bisect.Step{N: 5, Range: 1, Index: 4, Commit: realParent, Remaining: 9, Verdict: bisect.Good, Runs: 3, VsGood: cmp("same", 0.1), VsBad: cmp("different", -23), Reason: "same as good"},
		bisect.Step{N: 6, Range: 2, Index: 20, Commit: align, Remaining: 40, Verdict: bisect.Bad, Runs: 3, VsGood: cmp("different", 43), VsBad: cmp("same", 0.2), Reason: "same as bad"})
	res.Ends = res.Ranges[0].Ends
	res.Runs, res.CheckRuns, res.FirstRuns, res.RunsUsed = 157, 30, 100, 170
	r.Result = &res
	return r
}

// bisectInteraction: the culprit is a merge whose merged side does not
// reproduce the change.
func bisectInteraction() *BisectReport {
	r := bisectFound()
	res := *r.Result
	merge, mp := bisectCommit(7, "Merge branch 'topic'"), bisectCommit(3, "notes: log run 22")
	base, tip := bisectCommit(8, "notes: log run 9"), bisectCommit(9, "text: note the head scan")
	c := bisect.Culprit{Commit: merge, Parent: mp, Change: 30, Check: res.Check, Merge: true, Interaction: true, Triage: res.Triage,
		Note: "its second parent 999999999999 against the merge base 888888888888 does not reproduce the change (+0.4%, same): neither side alone has it, so the merge itself is the culprit (an interaction of the two sides)"}
	res.Culprits = []bisect.Culprit{c}
	res.Culprit, res.Parent, res.Merge = &merge, &mp, true
	res.Ranges = []bisect.Range{
		{Kind: bisect.RangeMain, Good: res.Good, Bad: res.Bad, Commits: 63, Span: [2]int{-1, 62}, Status: bisect.RangeCulprit, Ends: res.Ends, Culprit: &merge, Parent: &mp, Merge: true, Runs: 60},
		{Kind: bisect.RangeMerge, Good: base, Bad: tip, Commits: 9, Of: &merge, Via: []gitrev.Commit{merge}, Path: 1, Span: [2]int{-1, 8}, Status: bisect.RangeSame,
			Ends: &bisect.Comparison{Decision: "same", Change: 0.4, Lo: -1.2, Hi: 2.0, P: 0.6, Test: "mann-whitney", N: 9, RefN: 9}, Runs: 18},
	}
	res.Runs, res.FirstRuns = 78, 60
	r.Result = &res
	return r
}

func TestBisectCulpritsGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		r    func() *BisectReport
	}{{"every", bisectEvery}, {"interaction", bisectInteraction}} {
		for _, format := range BisectFormats {
			t.Run(c.name+"-"+string(format), func(t *testing.T) {
				var b bytes.Buffer
				if err := WriteBisect(&b, c.r(), format); err != nil {
					t.Fatal(err)
				}
				testutil.Golden(t, filepath.Join("testdata", "bisect_"+c.name+"."+string(format)), b.Bytes())
			})
		}
	}
}

// TestBisectCulpritsShape: each report names every culprit, the merge the
// first came through, the unsearched ranges, and an interaction as such.
func TestBisectCulpritsShape(t *testing.T) {
	for _, format := range BisectFormats {
		var b bytes.Buffer
		if err := WriteBisect(&b, bisectEvery(), format); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"444444444444", "aaaaaaaaaaaa", "777777777777"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %s:\n%s", format, want, out)
			}
		}
		if format != "json" && !strings.Contains(out, "came in through the merge 777777777777") {
			t.Errorf("%s report does not say the culprit came in through the merge:\n%s", format, out)
		}
		if format != "json" && !strings.Contains(out, "budget") {
			t.Errorf("%s report does not say the budget ran out:\n%s", format, out)
		}
		b.Reset()
		if err := WriteBisect(&b, bisectInteraction(), format); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "interaction") {
			t.Errorf("%s report does not call the merge an interaction:\n%s", format, b.String())
		}
	}
}
