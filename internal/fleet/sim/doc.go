// Package sim measures how perfbot's planning scales over a fleet of
// benchmark machines too large and too slow to run for a test: a fleet of
// simulated workers on a virtual clock, below the real pipelines.
//
// What is real: bisect.Run and triage.Run (the k-ary search, speculation,
// the culprit's check, skips, the triage's experiment schedule and every
// statistical decision), package measure (the plan, its rounds, the run
// numbers claimed through [measure.Reserver]), the results store (SQLite)
// and the commit history (a git repository, read with package gitrev).
//
// What is simulated: the builds and runs (a [Fleet] of workers on which a
// build takes Config.Build and a run Config.Run of virtual time, with
// figures drawn from a [Truth] whose culprit is known), River's queues
// and the fleet client's placement of work (modelled on internal/fleet:
// builds go to any free worker of the class, each measurement's rounds to
// one worker, a worker does one thing at a time), and the clock: a Fleet
// runs inside a testing/synctest bubble, whose clock moves only when
// every goroutine of the pipeline waits, so that time.Now in the pipeline
// (bisect's and triage's Wall) is the fleet's virtual time.
package sim
