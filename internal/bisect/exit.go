package bisect

// ExitNoCulprit is perfbot bisect's exit status when it confirms no
// culprit (0 when it does; 2 for bad input and errors).
const ExitNoCulprit = 1

// NoCulpritError ends a bisection whose ends do not differ: it wraps
// [ErrNoChange] and the figures, and asks for exit status ExitNoCulprit.
type NoCulpritError struct{ Err error }

func (e *NoCulpritError) Error() string { return e.Err.Error() }
func (e *NoCulpritError) Unwrap() error { return e.Err }

// ExitCode is the exit status the error asks for.
func (e *NoCulpritError) ExitCode() int { return ExitNoCulprit }

// ExitStatus is perfbot bisect's exit status for a finished bisection: 0
// when it found a culprit and the check confirmed it (the first one: the
// others, and a budget that ran out, are in the report), else
// ExitNoCulprit and a line saying so.
func (r *Result) ExitStatus() (int, string) {
	if r.Found() {
		return 0, ""
	}
	return ExitNoCulprit, "bisect: no confirmed culprit (see the report)"
}
