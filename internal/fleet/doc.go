// Package fleet spreads perfbot's measuring over many benchmark machines
// through River (github.com/riverqueue/river), a job queue in PostgreSQL:
// builds and rounds are River jobs, and a fleet worker is one more
// executor of the one measuring path (package measure).
//
// Jobs, by kind (see jobs.go):
//
//   - perfbot.build: build one commit under one variant on a machine of a
//     class (queue "class_<class>"); the worker uploads the artifacts and
//     the log into the database, addressed by their SHA-256.
//   - perfbot.round: one interleaved round of a comparison, the slots of
//     one round in the order package measure planned them, on one machine
//     (queue "machine_<id>"). Every round of a measurement goes to the same
//     machine; only when that machine dies are its unfinished rounds moved
//     to another, and then the rounds of each machine are paired within
//     that machine (compare.Pair has the machine) and the report says so.
//   - perfbot.compare and perfbot.bisect: the orchestration of a
//     comparison or a bisection, worked by the server (queue "control"),
//     through measure.Measure and bisect.Run with this package's
//     [Builder] and [Executor].
//   - perfbot.watch: one cycle of a watch file (package watch), each job
//     on the machines of its class, its state in the fleet's results
//     store (watch.go); [Server.Schedule] queues a file's cycles, one
//     scheduler per file across servers (an advisory lock: schedule.go).
//   - perfbot.sensitivity: sensitivity.Run over the fleet's [Server.Env].
//   - perfbot.triage: a triage, worked by the server (queue "control"),
//     through triage.Run with every experiment's rounds on one machine of
//     the class (Remote.Bind), started again on another when it dies
//     (triage.go).
//
// Faults: the rounds and the build of a worker that is gone (its
// machine's heartbeat is DeadAfter old, or its worker was started again)
// are cancelled and queued again at once, and another worker finishes
// them (River's rescuer would wait for the job's timeout, which follows
// the job file); runs are keyed by store.RunKey and
// stored by upsert, so none is stored twice. A worker that loses the
// database stops measuring (the run in flight is killed with everything
// it started) and retries. Everything lives in the database, so a server
// restart loses nothing. A watch cycle whose server died (its liveness
// lock is free) is queued again within seconds, not after its lease
// (watchrescue.go); the other orchestrations wait for the lease.
package fleet
