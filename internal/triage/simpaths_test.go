// Particular paths of the decision procedure, on simulated benchmarks.

package triage

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/verdict"
)

// TestSimulatedPaths checks the sentences and notes of particular paths.
func TestSimulatedPaths(t *testing.T) {
	quiet := simModel{noise: 0.01, baseText: 1, baseData: 0, aligned: 0}

	t.Run("hidden regression: the plain comparison disagrees", func(t *testing.T) {
		m := quiet
		m.code = math.Log(1.2)
		m.textShift = 1
		m.text = slowClass(m.baseText, 1.2)
		res, _ := simTriage(t, m, 1)
		if res.Verdict != verdict.RealRegression || !strings.Contains(res.Disagreement, "hides") || !strings.Contains(res.Sentence, "The plain comparison disagrees") {
			t.Errorf("verdict %s, disagreement %q, sentence %q; want a real regression whose sentence says the plain comparison disagrees", res.Verdict, res.Disagreement, res.Sentence)
		}
		// Forced alignment shows it, no data moved, and the sweep agrees.
		if !slices.Equal(res.DecidedBy, []ExperimentName{ForcedExperiment, SweepExperiment}) || !strings.Contains(res.Sentence, "aligned to 64 bytes the change is +") {
			t.Errorf("decided by %v, sentence %q: want forced alignment weighed with the sweep", res.DecidedBy, res.Sentence)
		}
		if res.Robust == nil || res.Robust.Change <= 10 {
			t.Errorf("robust estimate %+v: want the sweep to estimate the change near +20%%", res.Robust)
		}
	})

	t.Run("build ignores the knobs: never a verdict from the sweep", func(t *testing.T) {
		m := quiet
		m.dataShift = 1
		for c := range 4 {
			if mod4(c-m.baseData)%2 == 1 {
				m.data[c] = math.Log(1.4)
			}
		}
		m.knobsIgnored = true
		m.noPatch = true
		res, _ := simTriage(t, m, 2)
		if res.Verdict != verdict.Inconclusive {
			t.Fatalf("verdict %s (%s), want inconclusive: the layouts are all the plain build", res.Verdict, res.Sentence)
		}
		notes := strings.Join(res.Notes, "\n")
		if !strings.Contains(notes, "ignores the preset's knobs") || !strings.Contains(notes, "--preset") {
			t.Errorf("notes do not say the build ignores the knobs and what to do:\n%s", notes)
		}
		// A source patch changes the source, which such a build compiles:
		// it restores the layout where the knobs cannot.
		m.noPatch = false
		res, _ = simTriage(t, m, 2)
		if res.Verdict != verdict.DataAlignment || !slices.Equal(res.DecidedBy, []ExperimentName{PlainExperiment, RestoreExperiment}) ||
			!strings.Contains(res.Sentence, "the source patch that puts back 16 bytes at x.c:3") {
			t.Errorf("with a source patch: verdict %s, decided by %v (%s); want data-alignment from the patched build", res.Verdict, res.DecidedBy, res.Sentence)
		}
	})

	t.Run("restore misses, forced alignment keeps the change: inconclusive with advice", func(t *testing.T) {
		m := quiet
		m.dataShift = 1
		for c := range 4 {
			if mod4(c-m.baseData)%2 == 1 {
				m.data[c] = math.Log(1.4)
			}
		}
		m.restoreBroken = true
		// The source patch was made but does not give the layout back: it
		// is reported, not measured, and the padding is used instead.
		m.patchBroken = true
		res, lab := simTriage(t, m, 3)
		if res.Verdict != verdict.Inconclusive {
			t.Fatalf("verdict %s (%s), want inconclusive", res.Verdict, res.Sentence)
		}
		if !strings.Contains(res.Sentence, "did not restore") || len(res.Notes) == 0 {
			t.Errorf("sentence %q, notes %q: want the failed restore and what would settle it", res.Sentence, res.Notes)
		}
		if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, "the source patch (removed x (.bss) at x.c:3) was not measured: the patched build does not have the base's layout back (not restored:") {
			t.Errorf("notes do not say why the source patch was not measured:\n%s", notes)
		}
		if res.SourcePatch == nil || res.SourcePatch.Restored {
			t.Errorf("Result.SourcePatch %+v: want the patch, not restored", res.SourcePatch)
		}
		if len(lab.runs[target{changed: true, setup: patchSetup, variant: job.Variant{Name: patchName, Env: map[string]string{"PAD": ""}, Patch: "diff --git a/x.c b/x.c\n"}}.key()]) != 0 {
			t.Error("the patched build that does not restore the layout was measured")
		}
		for _, x := range res.Experiments {
			if x.Name == "layout-sweep" && len(x.Layouts) != 16 {
				t.Errorf("the sweep stopped at %d layouts; it should grow to 16 before giving up", len(x.Layouts))
			}
		}
	})

	t.Run("build ignores the knobs, code moved: the text source patch decides both ways", func(t *testing.T) {
		m := quiet
		m.textShift = 1
		m.knobsIgnored = true
		m.text = slowClass(m.baseText+1, 1.4)
		res, _ := simTriage(t, m, 6)
		if res.Verdict != verdict.TextAlignment || !slices.Equal(res.DecidedBy, []ExperimentName{PlainExperiment, RestoreExperiment}) {
			t.Errorf("text artifact: verdict %s decided by %v (%s); want text-alignment from the patched build", res.Verdict, res.DecidedBy, res.Sentence)
		}
		// A real change the patch keeps, with no data moved: real.
		m.text = [4]float64{}
		m.code = math.Log(1.25)
		res, _ = simTriage(t, m, 7)
		if res.Verdict != verdict.RealRegression || !slices.Equal(res.DecidedBy, []ExperimentName{RestoreExperiment}) ||
			!strings.Contains(res.Sentence, "and no data object moved in its cache line") {
			t.Errorf("real change: verdict %s decided by %v (%s); want a real regression from the patched build", res.Verdict, res.DecidedBy, res.Sentence)
		}
		// With data moved too, a text patch that keeps the change is no
		// evidence: data alignment may explain it.
		m.code = 0
		m.dataShift = 1
		m.data = dataSlow(m.baseData, 1.3)
		res, _ = simTriage(t, m, 8)
		if res.Verdict.IsReal() {
			t.Errorf("data artifact with code moved too: verdict %s (%s); a text patch does not rule data out", res.Verdict, res.Sentence)
		}
	})

	t.Run("patched build loads the base's bytes: decided at the first look, unless it sees a change", func(t *testing.T) {
		m := simModel{noise: 0.04, baseText: 1, baseData: 0, aligned: 0}
		m.dataShift = 1
		m.data = dataSlow(m.baseData, 1.3)
		m.patchIdentical = true
		res, lab := simTriage(t, m, 9)
		var reason string
		for _, x := range res.Experiments {
			if x.Name == RestoreExperiment {
				reason = x.Reason
			}
		}
		if res.Verdict != verdict.DataAlignment || lab.taken != 30 || !strings.Contains(reason, "it is the base program") ||
			!strings.Contains(res.Sentence, "load the base build's code and data byte for byte") {
			t.Errorf("verdict %s after %d runs, restore %q (%s); want data-alignment at the first look, by identity", res.Verdict, lab.taken, reason, res.Sentence)
		}
		// A real change outside the artifacts (a script) is in the patched
		// build's runs too: no decision by identity, and a real verdict.
		m.script = math.Log(1.15)
		m.data = [4]float64{}
		res, _ = simTriage(t, m, 9)
		for _, x := range res.Experiments {
			if x.Name == RestoreExperiment && strings.Contains(x.Reason, "base program") {
				t.Errorf("a change in a script passed for none: %s", x.Reason)
			}
		}
		if res.Verdict != verdict.RealRegression {
			t.Errorf("script change: verdict %s (%s), want real-regression", res.Verdict, res.Sentence)
		}
	})

	t.Run("identical builds: one look, no sweep", func(t *testing.T) {
		m := quiet
		m.identical = true
		res, lab := simTriage(t, m, 4)
		if res.Verdict != verdict.NoChange || len(res.Experiments) != 1 || lab.taken != 20 || !strings.Contains(res.Sentence, "byte-identical") {
			t.Errorf("verdict %s, %d experiments, %d runs, %q; want no-change after 10 pairs", res.Verdict, len(res.Experiments), lab.taken, res.Sentence)
		}
	})

	t.Run("budget: runs counted once per build", func(t *testing.T) {
		m := quiet
		m.code = math.Log(1.3)
		res, lab := simTriage(t, m, 5)
		if res.Runs != lab.taken {
			t.Errorf("Runs = %d, the lab took %d", res.Runs, lab.taken)
		}
		if res.FixedRuns != 100 {
			t.Errorf("FixedRuns = %d, want 100 (plain, forced and 3 layouts per commit, 10 runs each; no restore: nothing moved)", res.FixedRuns)
		}
	})
}

// TestSimulatedEqualizers checks forced alignment and the data restore as
// evidence both ways: a masked regression is real, a data artifact never
// comes out as real, and each path costs at most half the fixed design.
func TestSimulatedEqualizers(t *testing.T) {
	quiet := simModel{noise: 0.01, baseText: 1, baseData: 0, aligned: 0}

	t.Run("masked: the plain build improves, forced alignment regresses: real regression", func(t *testing.T) {
		m := quiet
		m.code = math.Log(1.5)
		m.textShift = 1
		m.text = slowClass(m.baseText, 1.65)
		res, _ := simTriage(t, m, 11)
		if res.Verdict != verdict.RealRegression || !strings.Contains(res.Disagreement, "reverses the real change in the plain build") ||
			!slices.Equal(res.DecidedBy, []ExperimentName{ForcedExperiment, SweepExperiment}) {
			t.Errorf("verdict %s, decided by %v, disagreement %q; want a real regression from forced alignment and the sweep, the plain build reversing it",
				res.Verdict, res.DecidedBy, res.Disagreement)
		}
		if res.Change >= 0 || !strings.Contains(res.Sentence, "alignment reverses it there") {
			t.Errorf("plain change %+.1f%%, sentence %q: want the plain improvement and what alignment does to it", res.Change, res.Sentence)
		}
	})

	t.Run("a data artifact with data not ruled out is never real", func(t *testing.T) {
		for seed := range int64(20) {
			m := quiet
			m.dataShift = 1
			m.data = dataSlow(m.baseData, 1.4)
			m.restoreBroken = true
			m.textShift = 2 // code moved too, harmlessly
			res, _ := simTriage(t, m, 20+seed)
			if res.Verdict.IsReal() {
				t.Fatalf("seed %d: verdict %s (%s): forced alignment does not move data", seed, res.Verdict, res.Sentence)
			}
			if seed == 0 && !strings.Contains(strings.Join(res.Notes, "\n"), "forced alignment does not move data") {
				t.Errorf("notes %q do not say why forced alignment's change is not evidence", res.Notes)
			}
		}
	})

	t.Run("real regression hidden by data alignment: the restore shows it", func(t *testing.T) {
		m := quiet
		m.code = math.Log(1.2)
		m.dataShift = 1
		m.data = slowClass(m.baseData, 1.2)
		res, _ := simTriage(t, m, 12)
		if res.Verdict != verdict.RealRegression || !slices.Equal(res.DecidedBy, []ExperimentName{RestoreExperiment, SweepExperiment}) ||
			!strings.Contains(res.Sentence, "offset restored (the source patch at x.c:3) the change is +") {
			t.Errorf("verdict %s, decided by %v, sentence %q; want a real regression from the restore and the sweep", res.Verdict, res.DecidedBy, res.Sentence)
		}
	})

	t.Run("runs: at most half the fixed design on each path", func(t *testing.T) {
		text := quiet
		text.textShift = 1
		text.aligned = 3
		text.text = slowClass(text.baseText+1, 1.4)
		data := quiet
		data.dataShift = 1
		data.data = dataSlow(data.baseData, 1.4)
		masked := quiet
		masked.code = math.Log(1.2)
		masked.textShift = 1
		masked.text = slowClass(masked.baseText, 1.2)
		same := quiet
		same.identical = true
		for _, c := range []struct {
			name string
			m    simModel
			want verdict.Verdict
		}{{"text", text, verdict.TextAlignment}, {"data", data, verdict.DataAlignment}, {"masked", masked, verdict.RealRegression}, {"no-op", same, verdict.NoChange}} {
			res, _ := simTriage(t, c.m, 13)
			if res.Verdict != c.want || 2*res.Runs > res.FixedRuns {
				t.Errorf("%s: %s after %d runs (fixed design %d): want %s in at most half", c.name, res.Verdict, res.Runs, res.FixedRuns, c.want)
			}
		}
	})
}
