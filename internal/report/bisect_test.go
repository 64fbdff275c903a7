package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/testutil"
)

func bisectCommit(n int, subject string) gitrev.Commit {
	h := strings.Repeat(string("0123456789abcdef"[n%16]), 40)
	return gitrev.Commit{Hash: h, Subject: subject}
}

// bisectTableOf is a parent-vs-culprit table of two metrics from fixed
// samples, paired by run.
func bisectTableOf(parent, culprit gitrev.Commit) *compare.Table {
	ss := func(xs ...float64) []compare.Sample {
		out := make([]compare.Sample, len(xs))
		for i, x := range xs {
			out[i] = compare.Sample{Pair: compare.Pair{Round: i + 1}, Value: x}
		}
		return out
	}
	cols := []compare.Column{{ID: parent.Hash, Subject: parent.Subject, Runs: 6}, {ID: culprit.Hash, Subject: culprit.Subject, Runs: 6}}
	series := []compare.Series{
		{Metric: "text_ms", Unit: "ms", Better: metric.LowerIsBetter, KPI: true,
			Samples: [][]compare.Sample{ss(1.93, 1.94, 1.93, 1.95, 1.93, 1.94), ss(2.51, 2.53, 2.52, 2.51, 2.55, 2.52)}},
		{Metric: "time.elapsed_time", Unit: "s", Better: metric.LowerIsBetter,
			Samples: [][]compare.Sample{ss(0.21, 0.22, 0.21, 0.21, 0.22, 0.21), ss(0.23, 0.24, 0.23, 0.23, 0.23, 0.24)}},
	}
	return compare.Build(cols, series, true, compare.DefaultAlpha)
}

// bisectFound is a finished bisection with a confirmed culprit, a skipped
// commit, a guess and a triage verdict.
func bisectFound() *BisectReport {
	good, bad := bisectCommit(0, "bench: text and data kernels"), bisectCommit(15, "notes: log run 63")
	parent, culprit := bisectCommit(3, "notes: log run 22"), bisectCommit(4, "text: re-scan the input head after each call")
	cmp := func(d string, ch float64) *bisect.Comparison {
		return &bisect.Comparison{Decision: d, Change: ch, Lo: ch - 1, Hi: ch + 1, P: 0.001, Test: "mann-whitney", N: 3, RefN: 10}
	}
	res := &bisect.Result{
		Metric: "text_ms", Better: metric.LowerIsBetter, Layouts: 1,
		Good: good, Bad: bad, Commits: 63,
		Ends:     &bisect.Comparison{Decision: "different", Change: 30.1, Lo: 29.4, Hi: 30.9, P: 0.0001, Test: "mann-whitney", N: 10, RefN: 10},
		EndsRuns: [2]int{13, 13},
		Steps: []bisect.Step{
			{N: 1, Index: 31, Commit: bisectCommit(5, "bench: comment on batch sizes"), Remaining: 63, Verdict: bisect.Bad, Runs: 3, VsGood: cmp("different", 30.1), VsBad: cmp("same", 0.1), Reason: "differs from good by +30.1%, toward bad"},
			{N: 2, Index: 15, Commit: bisectCommit(6, "bench: rename tbest to text_best"), Remaining: 31, Verdict: bisect.Skip, Reason: "build failed: 6666666666666: exit status 2"},
			{N: 3, Index: 16, Commit: bisectCommit(7, "notes: log run 16"), Remaining: 31, Verdict: bisect.Good, Runs: 6, Disturbed: 1, VsGood: cmp("same", 0.2), VsBad: cmp("different", -23.1), Reason: "same as good (+0.2%)"},
			{N: 4, Index: 22, Commit: parent, Remaining: 15, Verdict: bisect.Good, Guessed: true, Runs: 40, VsGood: cmp("unknown", 3), VsBad: cmp("unknown", -20), Reason: "undecided after 40 runs"},
		},
		Culprit: &culprit, Parent: &parent,
		Check: &bisect.Check{Confirmed: true, Comparison: bisect.Comparison{Decision: "different", Change: 30.0, Lo: 29.9, Hi: 31.1, P: 0.002, Test: "mann-whitney", N: 6, RefN: 6},
			ParentRuns: [2]int{4, 9}, CulpritRuns: [2]int{7, 12}, Reason: "confirmed: in 6 fresh interleaved runs of each, the culprit differs from its parent by +30.0% [+29.9%, +31.1%]"},
		Triage:   &bisect.Triage{Verdict: "real-regression", Sentence: "The regression of text_ms is real: +30.0% [+28.1%, +31.9%] across 4 layouts."},
		Builds:   9,
		Runs:     60,
		RunsUsed: 66, CheckRuns: 12, BuildFailures: 1,
		Wall:  83 * time.Second,
		Notes: []string{"an example note"},
	}
	return &BisectReport{Result: res, Job: "kvstore", Repo: "/src/kvstore", Params: map[string]string{"size": "1000"},
		Mode: "plain", Table: bisectTableOf(parent, culprit),
		Command: "perfbot bisect perfbot.yaml --good 000000000000 --bad ffffffffffff --metric text_ms"}
}

// bisectUnconfirmed has a culprit that the check did not confirm, in
// forced-alignment mode, without a table.
func bisectUnconfirmed() *BisectReport {
	r := bisectFound()
	res := *r.Result
	res.Check = &bisect.Check{Comparison: bisect.Comparison{Decision: "same", Change: 0.1}, Reason: "not confirmed: in fresh runs the culprit performs like its parent"}
	res.Triage = nil
	r.Result, r.Mode, r.ModeDetail, r.Table = &res, "forced", "variant align64 of the c knobs", nil
	return r
}

// bisectCandidates has only skipped commits left.
func bisectCandidates() *BisectReport {
	r := bisectFound()
	res := *r.Result
	res.Culprit, res.Check, res.Triage = nil, nil, nil
	res.Candidates = []gitrev.Commit{bisectCommit(6, "bench: rename tbest to text_best"), bisectCommit(4, "text: re-scan the input head after each call")}
	r.Result, r.Table = &res, nil
	return r
}

func TestBisectGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		r    func() *BisectReport
	}{{"found", bisectFound}, {"unconfirmed", bisectUnconfirmed}, {"candidates", bisectCandidates}} {
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

// TestBisectEmailShape: the 0-day robot's first line and commit line, and
// the table below "Details are as below".
func TestBisectEmailShape(t *testing.T) {
	var b bytes.Buffer
	if err := WriteBisect(&b, bisectFound(), "email"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"perfbot noticed a 30.0% regression of text_ms on:\n",
		"commit: 4444444444444444444444444444444444444444 (\"text: re-scan the input head after each call\")\n",
		"Details are as below:\n",
		"perfbot triage says: The regression of text_ms is real",
		"      1.94           +30.3%       2.52        text_ms\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("email lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "Details are as below") > strings.Index(out, "text_ms\n") {
		t.Error("the table comes before the details line")
	}
	b.Reset()
	if err := WriteBisect(&b, bisectUnconfirmed(), "email"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "but fresh runs did not confirm it") {
		t.Errorf("unconfirmed email does not say so:\n%s", b.String())
	}
}

func TestBisectJSONParsesBack(t *testing.T) {
	var b bytes.Buffer
	if err := WriteBisect(&b, bisectFound(), "json"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Found  bool          `json:"found"`
		Mode   string        `json:"mode"`
		Better string        `json:"better"`
		Result bisect.Result `json:"result"`
		Table  struct {
			Columns []struct {
				ID string `json:"id"`
			} `json:"columns"`
		} `json:"table"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if !doc.Found || doc.Mode != "plain" || doc.Better != "lower" || doc.Result.Culprit == nil || len(doc.Result.Steps) != 4 || len(doc.Table.Columns) != 2 {
		t.Errorf("parsed back %+v", doc)
	}
	if doc.Result.Steps[1].Verdict != bisect.Skip || doc.Result.Check == nil || !doc.Result.Check.Confirmed {
		t.Errorf("steps or check lost: %+v", doc.Result)
	}
}

func TestBisectBadInput(t *testing.T) {
	var b bytes.Buffer
	if err := WriteBisect(&b, bisectFound(), "yaml"); err == nil || !strings.Contains(err.Error(), "text, markdown, json, email") {
		t.Errorf("unknown format: err = %v", err)
	}
	if err := WriteBisect(&b, nil, "text"); err == nil {
		t.Error("nil report: no error")
	}
	if err := WriteBisect(&b, &BisectReport{}, "text"); err == nil {
		t.Error("report without result: no error")
	}
}
