package triage

import (
	"fmt"

	"github.com/perfbot/perfbot/internal/verdict"
)

// Exit statuses of perfbot triage, by verdict.
const (
	ExitNotRegression = 0 // no change, an alignment artifact or a real improvement
	ExitRegression    = 1 // a real regression
	ExitInconclusive  = 3 // no verdict within the budget
)

// ExitStatus is perfbot triage's exit status for the verdict, and for a
// status that is not the verdict's plain answer a line saying why.
func (r *Result) ExitStatus() (int, string) {
	switch r.Verdict {
	case verdict.RealRegression:
		return ExitRegression, ""
	case verdict.Inconclusive:
		return ExitInconclusive, "triage inconclusive (see the notes above)"
	}
	return ExitNotRegression, ""
}

// Budget is the line that says what the triage spent, beside what a
// fixed design would.
func (r *Result) Budget() string {
	return fmt.Sprintf("triage budget: %d runs (%d new), %d builds (%d new) in %.1fs; a fixed design would take %d runs",
		r.Runs, r.NewRuns, r.Builds, r.NewBuilds, r.Wall.Seconds(), r.FixedRuns)
}
