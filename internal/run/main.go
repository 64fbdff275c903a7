package run

import (
	"errors"
	"os"
	"sync/atomic"
)

// Main must be the first thing a program that calls Exec does: perfbot's
// main, and the TestMain of every test binary whose tests run commands
// (directly or through build, measure and the pipelines). Exec runs each
// command under a supervisor, and a monitored one under a timer, that are
// this very program executed again (see reaper.go and timer.go); Main is
// where such a process turns into the supervisor or the timer, and it does
// not return then. In any other process it returns at once, having noted
// that Exec may start the program again.
//
// It is an explicit call rather than an init function of this package so
// that importing the package changes no program's start: an init would
// take over every binary that links it, whether or not the binary runs
// commands. Exec refuses to run in a program that did not call Main
// (ErrNoMain): such a program started again as the supervisor would run
// as itself (a test binary would run its tests again) instead.
func Main() {
	if len(os.Args) == 2 && os.Args[0] == reaperArg0 && os.Getenv(reaperEnv) == "1" {
		os.Exit(reaperMain())
	}
	if len(os.Args) == 6 && os.Args[1] == timerArg && os.Getenv(timerEnv) == "1" {
		os.Exit(timerMain(os.Args[2], os.Args[3:]))
	}
	mainCalled.Store(true)
}

// mainCalled is set by Main.
var mainCalled atomic.Bool

// ErrNoMain is wrapped by Exec's error in a program whose main (or
// TestMain) did not call Main.
var ErrNoMain = errors.New("run.Main was not called at the start of this program's main (or TestMain): its runs' supervisor cannot start")
