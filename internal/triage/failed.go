// Failed runs: stopping a triage whose runs mostly fail, and testing
// whether the commits fail at different rates.

package triage

import (
	"fmt"
	"math"
	"sort"
)

// errFailedRuns stops a triage whose runs mostly fail: what they measured
// cannot answer the question.
type errFailedRuns struct{ reason string }

func (e *errFailedRuns) Error() string { return "triage: " + e.reason }

// triageStep names an experiment in a sentence.
func triageStep(name ExperimentName) string {
	switch name {
	case PlainExperiment:
		return "the plain comparison"
	case SweepExperiment:
		return "the layout sweep"
	case ForcedExperiment:
		return "the forced-alignment experiment"
	case RestoreExperiment:
		return "the restore experiment"
	}
	return string(name)
}

// mostFailed says which build of experiment name, if any, failed in most
// of its runs, or kept fewer than two runs with a value because of
// failures; "" when none did.
func mostFailed(name ExperimentName, labels []string, vals []runVals, failed []runFails) string {
	for i := range vals {
		f, v := len(failed[i]), len(vals[i])
		if f > 0 && (2*f > f+v || v < 2) {
			return fmt.Sprintf("in %s, %d of %d runs of %s failed (first: %s)", triageStep(name), f, f+v, labels[i], firstReason(failed[i]))
		}
	}
	return ""
}

// firstReason is the reason of the failed run with the lowest number.
func firstReason(failed runFails) string {
	if keys := sortedKeys(failed); len(keys) > 0 {
		return failed[keys[0]]
	}
	return ""
}

// failAlpha is the level of the test that two commits fail at different
// rates.
const failAlpha = 0.05

// failNote compares the two commits' failed runs over every build of the
// triage: a note when any run failed, and whether the rates differ
// (Fisher's exact test, one-sided in the direction seen, at failAlpha). A
// change that makes the benchmark fail (or stop failing) is a change,
// whatever the timings of the runs that passed say.
func (e *engine) failNote() (note, gap string) {
	f, n := e.failCounts()
	var first [2]string
	keys := make([]string, 0, len(e.runCounts))
	for k := range e.runCounts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := e.runCounts[k]
		side := 0
		if c.changed {
			side = 1
		}
		if first[side] == "" && c.failed > 0 {
			first[side] = c.first
		}
	}
	if f[0]+f[1] == 0 || n[0] == 0 || n[1] == 0 {
		return "", ""
	}
	more, less := 1, 0
	if float64(f[0])/float64(n[0]) > float64(f[1])/float64(n[1]) {
		more, less = 0, 1
	}
	name := [2]string{"base", "changed"}
	p := fisherGreater(f[more], n[more], f[less], n[less])
	counts := fmt.Sprintf("%s fails in %d of %d runs, %s in %d of %d", name[more], f[more], n[more], name[less], f[less], n[less])
	note = fmt.Sprintf("failed runs: %s fails in %d of %d runs (first: %s), %s in %d of %d (Fisher's exact test p=%.2g)",
		name[more], f[more], n[more], first[more], name[less], f[less], n[less], p)
	if p < failAlpha {
		return note + ": the builds differ in whether the benchmark completes, which the timings of the runs that passed do not show", counts
	}
	return note + ": too few to tell the commits apart; failed runs are left out of the timings", ""
}

// failCounts are each commit's failed runs and runs over every build of
// the triage (base, changed).
func (e *engine) failCounts() (f, n [2]int) {
	for _, c := range e.runCounts {
		side := 0
		if c.changed {
			side = 1
		}
		f[side] += c.failed
		n[side] += c.runs
	}
	return f, n
}

// failsUnsettled reports whether two builds' failures hint at different
// rates without showing them: the one-sided p-value in the direction seen
// is at least failAlpha, and under 1/2 or one build never failed.
func failsUnsettled(fa, na, fb, nb int) bool {
	if fa+fb == 0 || na == 0 || nb == 0 {
		return false
	}
	p := fisherGreater(fb, nb, fa, na)
	if float64(fa)/float64(na) > float64(fb)/float64(nb) {
		p = fisherGreater(fa, na, fb, nb)
	}
	return p >= failAlpha && (p < 0.5 || (fa == 0) != (fb == 0))
}

// fisherGreater is the one-sided p-value of Fisher's exact test that a
// group with fa failures in na runs fails more often than one with fb in
// nb: the chance, with the failures dealt at random among all runs, that
// the first group gets fa or more.
func fisherGreater(fa, na, fb, nb int) float64 {
	total, fails := na+nb, fa+fb
	lchoose := func(n, k int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		c, _ := math.Lgamma(float64(n - k + 1))
		return a - b - c
	}
	p := 0.0
	for x := fa; x <= min(fails, na); x++ {
		if fails-x > nb {
			continue
		}
		p += math.Exp(lchoose(fails, x) + lchoose(total-fails, na-x) - lchoose(total, na))
	}
	return min(p, 1)
}
