package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/triage"
	"github.com/perfbot/perfbot/internal/verdict"
)

var (
	triageBase    = gitrev.Commit{Hash: "a0e2dab44d22b913ab7d5c2b0d3fb1fe8a3b1c2d", Subject: "x86/bugs: Add a static key for MDS"}
	triageChanged = gitrev.Commit{Hash: "6613d82e617dd7eb8b0c40b2fe3acea655b1d611", Subject: "x86/bugs: Use ALTERNATIVE() instead of mds_user_clear static key"}
)

// triageTable makes an experiment's 0-day table from fixed samples.
func triageTable(cols []compare.Column, samples ...[]float64) *compare.Table {
	s := compare.Series{Metric: "stress-ng.mutex.ops_per_sec", Better: metric.HigherIsBetter, KPI: true}
	for _, xs := range samples {
		var ss []compare.Sample
		for i, x := range xs {
			ss = append(ss, compare.Sample{Pair: compare.Pair{Round: i + 1}, Value: x})
		}
		s.Samples = append(s.Samples, ss)
	}
	for i := range cols {
		cols[i].Runs = len(samples[i]) + cols[i].Failed
	}
	return compare.Build(cols, []compare.Series{s}, true, 0.01)
}

// triageSeedResult is the seed's data-alignment report as a triage result:
// -7.9 % in the plain build, recovered (+0.3 %) by padding .bss.
func triageSeedResult() *triage.Result {
	base := []float64{302318, 301900, 302700, 302100, 302500, 302300, 302000, 302600, 302200, 302400}
	changed := []float64{278364, 278100, 278600, 278200, 278500, 278300, 278000, 278700, 278400, 278250}
	padded := []float64{303161, 302900, 303400, 303000, 303300, 303100, 302800, 303500, 303200, 303050}
	c := func(h, v string) compare.Column { return compare.Column{ID: h, Variant: v} }
	return &triage.Result{
		Verdict:  verdict.DataAlignment,
		Sentence: "The -7.9% change in stress-ng.mutex.ops_per_sec is a data alignment artifact, not a real change: padding 16 bytes into .bss so that mds_idle_clear gets back its offset 0 in its cache line gives back the base figure (+0.3% against the base); across 4 code/data layouts the change is -0.4% (99% CI -9.8% to +9.9%, not significant).",
		Metric:   "stress-ng.mutex.ops_per_sec", Unit: "ops/s", Better: metric.HigherIsBetter,
		Job: "stress-ng/mutex", Preset: "kernel", Base: triageBase, Changed: triageChanged,
		Change: -7.9,
		Robust: &triage.Robust{Layouts: 4, Change: -0.4, Lo: -9.8, Hi: 9.9, P: 0.88, Confidence: 0.99,
			SensitivityBase: 4.1, SensitivityChanged: 4.3, LayoutP: 0.0001, WithinCV: 0.2},
		Disagreement: "the plain comparison shows -7.9% (different) but across 4 layouts the change is -0.4% (CI -9.8% to +9.9%), not significant: the plain change does not survive other layouts",
		DecidedBy:    []triage.ExperimentName{triage.PlainExperiment, triage.RestoreExperiment},
		Experiments: []triage.Experiment{
			{Name: "plain", Title: "the two commits as they build", Outcome: "different", Runs: 10, Looks: 1,
				Change: -7.9, Lo: -8.0, Hi: -7.8, P: 0.002, Confidence: 0.98, Reason: "wilcoxon p=0.00195 < 0.01, change -7.90%",
				Columns: []triage.Column{{Label: "base", Commit: triageBase.Hash, N: 10, Median: 302300},
					{Label: "changed", Commit: triageChanged.Hash, N: 10, Median: 278325, Change: -7.93}},
				Table: triageTable([]compare.Column{c(triageBase.Hash, ""), c(triageChanged.Hash, "")}, base, changed)},
			{Name: "layout-sweep", Title: "both commits built under 4 layouts (falign16..falign64)", Outcome: "unclear", Runs: 3, Looks: 1,
				Change: -0.4, Lo: -9.8, Hi: 9.9, P: 0.88, Confidence: 0.99,
				Reason: "across 4 layouts the change is -0.4% (99% CI -9.8% to +9.9%, p=0.88): neither significant nor within ±5%",
				Layouts: []triage.LayoutRow{{Variant: "(plain)", Base: 302300, Changed: 278325, Change: -7.93, N: 3},
					{Variant: "layout1", Base: 281000, Changed: 301500, Change: 7.3, N: 3},
					{Variant: "layout2", Base: 301800, Changed: 302100, Change: 0.1, N: 3},
					{Variant: "layout3", Base: 302000, Changed: 301700, Change: -0.1, N: 3}}},
			{Name: "restore", Title: "the changed commit rebuilt with 16 bytes of padding in .bss, restoring mds_idle_clear's offset 0 mod 64 (it is at 48)",
				Outcome: "same", Runs: 10, Looks: 1, Change: 0.28, Lo: 0.2, Hi: 0.35, P: 0.002, Confidence: 0.98,
				Reason: "the 98% interval of the change [+0.20%, +0.35%] lies within ±5%",
				Columns: []triage.Column{{Label: "base", Commit: triageBase.Hash, Variant: "control", N: 10, Median: 302300},
					{Label: "changed", Commit: triageChanged.Hash, Variant: "control", N: 10, Median: 278325, Change: -7.93},
					{Label: "changed+padding", Commit: triageChanged.Hash, Variant: "restore", N: 10, Median: 303125, Change: 0.27}},
				Table: triageTable([]compare.Column{c(triageBase.Hash, ""), c(triageChanged.Hash, ""), c(triageChanged.Hash, "padding")}, base, changed, padded)},
		},
		Suspects: []triage.Suspect{{Name: "mds_idle_clear", Kind: "object", Section: ".bss", OffBase: 0, OffChanged: 48, Why: "offset mod 32 0 -> 16"}},
		Padding:  "insert 16 bytes into .bss just before mds_idle_clear (after switch_mm_always_ibpb) to move mds_idle_clear from offset 48 back to 0 mod 64.",
		Notes:    []string{"no restore experiment for the text: the kernel build has no knob that moves one symbol"},
		Runs:     82, NewRuns: 60, Builds: 11, NewBuilds: 9, FixedRuns: 130, Wall: 83 * time.Second,
	}
}

// TestTriageGolden prints the seed's case in every triage format (issue 4:
// text, Markdown, JSON and an email in the shape of the 0-day messages,
// the tables in the 0-day layout with the seed's three columns).
func TestTriageGolden(t *testing.T) {
	r := triageSeedResult()
	for _, format := range TriageFormats {
		var b bytes.Buffer
		opt := TriageOptions{Format: format, Machine: "2 CPUs AMD EPYC 9B45, runs pinned to CPU 0",
			Command: "perfbot triage jobs/stress-ng.yaml a0e2dab44d22 6613d82e617d --metric stress-ng.mutex.ops_per_sec --preset kernel"}
		if err := WriteTriage(&b, r, opt); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, filepath.Join("testdata", "triage_seed."+string(format)+".golden"), b.Bytes())
	}
}

// TestTriageEmailShape checks what a maintainer sees first in the email,
// and the restore table's three columns (base, changed, changed+padding).
func TestTriageEmailShape(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTriage(&b, triageSeedResult(), TriageOptions{Format: "email"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasPrefix(lines[0], "Subject: [perfbot] 6613d82e617d: stress-ng.mutex.ops_per_sec -7.9%: data alignment artifact, not a real change") {
		t.Errorf("subject line = %q", lines[0])
	}
	if lines[2] != "Hello," || !strings.HasPrefix(lines[4], "The -7.9% change in stress-ng.mutex.ops_per_sec is a data alignment artifact") {
		t.Errorf("the sentence must come right after the greeting; got %q, %q", lines[2], lines[4])
	}
	want := "a0e2dab44d22b913 6613d82e617dd7eb8b0c40b2fe3 6613d82e617dd7eb8b0/padding"
	if !strings.Contains(b.String(), want) {
		t.Errorf("email lacks the seed's three-column header %q", want)
	}
	if !strings.Contains(b.String(), "    302301            -7.9%     278341            +0.3%     303141        stress-ng.mutex.ops_per_sec") {
		t.Errorf("email lacks the seed's row:\n%s", b.String())
	}
}

// TestTriageJSON checks the JSON's stable identifiers and that non-finite
// figures become null instead of breaking the encoding.
func TestTriageJSON(t *testing.T) {
	r := triageSeedResult()
	r.Experiments[1].Layouts[0].Change = nan()
	var b bytes.Buffer
	if err := WriteTriage(&b, r, TriageOptions{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["verdict"] != "data-alignment" || got["real"] != false {
		t.Errorf("verdict %v real %v", got["verdict"], got["real"])
	}
	m := got["metric"].(map[string]any)
	if m["better"] != "higher" {
		t.Errorf("metric.better = %v, want higher", m["better"])
	}
	sweep := got["experiments"].([]any)[1].(map[string]any)
	if sweep["layouts"].([]any)[0].(map[string]any)["change"] != nil {
		t.Errorf("a NaN change must be null")
	}
	if err := WriteTriage(&b, r, TriageOptions{Format: "yaml"}); err == nil || !strings.Contains(err.Error(), "email") {
		t.Errorf("unknown format: err = %v, want one naming the valid formats", err)
	}
	if err := WriteTriage(&b, nil, TriageOptions{}); err == nil {
		t.Error("nil result: no error")
	}
}

// triageCrashResult is a triage whose changed commit crashes in 4 of its
// 10 runs while the timings of the others agree with the base.
func triageCrashResult() *triage.Result {
	base := []float64{302318, 301900, 302700, 302100, 302500, 302300, 302000, 302600, 302200, 302400}
	changed := []float64{302300, 301950, 302650, 302150, 302450, 302350}
	return &triage.Result{
		Verdict:  verdict.Inconclusive,
		Sentence: "Inconclusive: stress-ng.mutex.ops_per_sec changes by +0.0% in the plain build (same); the commits fail at different rates: changed fails in 4 of 10 runs, base in 0 of 10.",
		Metric:   "stress-ng.mutex.ops_per_sec", Unit: "ops/s", Better: metric.HigherIsBetter,
		Job: "stress-ng/mutex", Preset: "kernel", Base: triageBase, Changed: triageChanged, Identical: true,
		Experiments: []triage.Experiment{
			{Name: "plain", Title: "the two commits as they build", Outcome: "same", Runs: 10, Looks: 1,
				Change: 0.01, Lo: -0.05, Hi: 0.06, P: 0.9, Confidence: 0.98, Reason: "the 98% interval of the change [-0.05%, +0.06%] lies within ±5%",
				Columns: []triage.Column{{Label: "base", Commit: triageBase.Hash, N: 10, Median: 302300},
					{Label: "changed", Commit: triageChanged.Hash, N: 6, Failed: 4, Median: 302325, Change: 0.01}},
				Table: triageTable([]compare.Column{{ID: triageBase.Hash}, {ID: triageChanged.Hash, Failed: 4}}, base, changed)},
		},
		Notes: []string{"failed runs: changed fails in 4 of 10 runs (first: crashed: killed by signal SIGSEGV), base in 0 of 10 (Fisher's exact test p=0.043): the builds differ in whether the benchmark completes, which the timings of the runs that passed do not show"},
		Runs:  20, NewRuns: 20, Builds: 2, NewBuilds: 2, FixedRuns: 20, Wall: 12 * time.Second,
	}
}

// TestTriageFailedRuns: the failed runs of a triage are in every format:
// lkp's fail:runs row in the text and email tables, a failed column in
// Markdown, a count per build in JSON.
func TestTriageFailedRuns(t *testing.T) {
	r := triageCrashResult()
	want := map[string]string{
		"text":     "4:10    " + FailedRunsStat,
		"email":    "4:10    " + FailedRunsStat,
		"markdown": "| changed | 10 | 4 | 302325 | +0.0% |",
		"json":     `"failed": 4`,
	}
	for _, format := range TriageFormats {
		var b bytes.Buffer
		if err := WriteTriage(&b, r, TriageOptions{Format: format}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want[string(format)]) {
			t.Errorf("%s: no %q:\n%s", format, want[string(format)], b.String())
		}
		testutil.Golden(t, filepath.Join("testdata", "triage_failed."+string(format)+".golden"), b.Bytes())
	}
}

func nan() float64 {
	var zero float64
	return zero / zero
}

// TestTriageMaskedRegression: a regression that the plain build hides
// (the plain comparison shows an improvement) and forced alignment shows
// is reported as real, naming the experiments it rests on and saying
// that alignment hides it in the plain build.
func TestTriageMaskedRegression(t *testing.T) {
	r := &triage.Result{
		Verdict: verdict.RealRegression,
		Sentence: "bbbbbbbbbbbb makes t_ms 50.0% worse than aaaaaaaaaaaa: a real regression, not an alignment artifact; built with functions and loops aligned to 64 bytes the change is +50.0% (98% CI +48.0% to +52.0%), and no data object moved in its cache line; " +
			"the layout sweep agrees: across 4 code/data layouts the change is +45.0% (99% CI -20.0% to +150.0%, not significant). The plain comparison disagrees (-9.1%, different): alignment reverses it there.",
		Metric: "t_ms", Unit: "ms", Better: metric.LowerIsBetter, Job: "bench", Preset: "c", Base: triageBase, Changed: triageChanged,
		Change:       -9.1,
		Disagreement: "the plain comparison shows -9.1% (different) but under forced alignment the change is +50.0% (CI +48.0% to +52.0%): an alignment change reverses the real change in the plain build",
		DecidedBy:    []triage.ExperimentName{triage.ForcedExperiment, triage.SweepExperiment},
	}
	for format, want := range map[string][]string{
		"text":     {"verdict: real-regression", "decided by: forced alignment, layout sweep", "reverses the real change in the plain build"},
		"markdown": {"Decided by: forced alignment, layout sweep.", "reverses the real change"},
		"json":     {`"decided_by": [`, `"forced-alignment",`, `"real": true`},
		"email":    {"decided by: forced alignment, layout sweep", "Note: the plain comparison shows -9.1%"},
	} {
		var b bytes.Buffer
		if err := WriteTriage(&b, r, TriageOptions{Format: Format(format)}); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s report lacks %q:\n%s", format, w, b.String())
			}
		}
	}
}

// triageSeedPatchResult is the seed's report as the seed's engineer made
// it: the third column is the changed commit with a source patch that
// puts a 16-byte key back where mds_user_clear was, and the patch is in
// the report for git apply.
func triageSeedPatchResult() *triage.Result {
	r := triageSeedResult()
	r.Sentence = "The -7.9% change in stress-ng.mutex.ops_per_sec is a data alignment artifact, not a real change: the source patch that puts back 16 bytes at arch/x86/kernel/cpu/bugs.c:114 (removed mds_user_clear (.bss)), so that mds_idle_clear and everything after it in .bss get back their base address, gives back the base figure (+0.3% against the base)."
	r.Experiments = []triage.Experiment{r.Experiments[0], r.Experiments[2]}
	x := &r.Experiments[1]
	x.Title = "the changed commit rebuilt with the source patch that puts back 16 bytes at arch/x86/kernel/cpu/bugs.c:114 (removed mds_user_clear (.bss)), giving mds_idle_clear its base address back, and every address after it in .bss"
	x.Columns[2].Label, x.Columns[2].Variant = "changed+patch", "patched"
	x.Table.Columns[2].Variant = "patch"
	r.Padding, r.Notes, r.Disagreement, r.Robust = "", nil, "", nil
	r.SourcePatch = &triage.SourcePatch{Root: "removed mds_user_clear (.bss)", Suspect: "mds_idle_clear", File: "arch/x86/kernel/cpu/bugs.c", Line: 114,
		Section: ".bss", Bytes: 16, Align: 8, Exact: true, Restored: true,
		Check: "restored: .bss: 383 of 383 symbols from the spot on are back at their base address; mds_idle_clear is back",
		Notes: []string{"mds_user_clear was exported (EXPORT_SYMBOL): the patch puts back the object, not its export, so the export tables stay shifted"},
		Diff: "diff --git a/arch/x86/kernel/cpu/bugs.c b/arch/x86/kernel/cpu/bugs.c\n--- a/arch/x86/kernel/cpu/bugs.c\n+++ b/arch/x86/kernel/cpu/bugs.c\n" +
			"@@ -111,6 +111,9 @@\n /* Control unconditional IBPB in switch_mm() */\n DEFINE_STATIC_KEY_FALSE(switch_mm_always_ibpb);\n \n" +
			"+/* perfbot: puts back the 16 bytes of mds_user_clear (.bss), removed by this change, so that what follows keeps its old address. */\n" +
			"+char __perfbot_pad_mds_user_clear[16] __attribute__((__used__, __aligned__(8)));\n+\n" +
			" /* Control MDS CPU buffer clear before idling (halt, mwait) */\n DEFINE_STATIC_KEY_FALSE(mds_idle_clear);\n EXPORT_SYMBOL_GPL(mds_idle_clear);\n"}
	r.FixedRuns, r.Runs, r.NewRuns = 130, 50, 50
	return r
}

// TestTriageSourcePatch: the seed's three columns with the source patch
// as the third, and the patch itself, in every format: a git diff the
// user can apply, its spot and the layout check.
func TestTriageSourcePatch(t *testing.T) {
	r := triageSeedPatchResult()
	for _, format := range TriageFormats {
		var b bytes.Buffer
		if err := WriteTriage(&b, r, TriageOptions{Format: format}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, w := range []string{"removed mds_user_clear (.bss)", "arch/x86/kernel/cpu/bugs.c", "383 of 383 symbols",
			"+char __perfbot_pad_mds_user_clear[16] __attribute__((__used__, __aligned__(8)));"} {
			switch {
			case format == "json":
				w = strings.ReplaceAll(w, `"`, `\"`)
			case format == "markdown" && !strings.HasPrefix(w, "+"):
				w = strings.ReplaceAll(w, "_", `\_`) // prose is escaped, the diff block not
			}
			if !strings.Contains(out, w) {
				t.Errorf("%s report lacks %q:\n%s", format, w, out)
			}
		}
		if format == "text" || format == "email" {
			if !strings.Contains(out, "6613d82e617dd7eb8b0c4/patch ") {
				t.Errorf("%s: no changed+patch column in the restore table:\n%s", format, out)
			}
			if strings.Contains(out, "byte for byte") {
				t.Errorf("%s: the seed's patched build is not the base program (its code changed), yet the report says so", format)
			}
			// The diff is printed as git apply takes it.
			if !strings.Contains(out, "\n"+r.SourcePatch.Diff) {
				t.Errorf("%s: the patch is not printed whole, unindented", format)
			}
		}
		testutil.Golden(t, filepath.Join("testdata", "triage_patch."+string(format)+".golden"), b.Bytes())
	}
	r.SourcePatch.Identical = true
	for _, format := range []Format{FormatText, FormatMarkdown, FormatEmail} {
		var b bytes.Buffer
		if err := WriteTriage(&b, r, TriageOptions{Format: format}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "loads the base build's code and data byte for byte") {
			t.Errorf("%s: a patched build that is the base program is not said to be", format)
		}
	}
}
