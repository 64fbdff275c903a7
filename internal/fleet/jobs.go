package fleet

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// Queues: builds of a class go to its class queue, rounds to the queue of
// the machine that takes every round of their measurement, orchestration
// to the server's control queue.
const QueueControl = "control"

// ClassQueue is the queue of the builds of machine class class.
func ClassQueue(class string) string { return "class_" + class }

// MachineQueue is the queue of the rounds pinned to machine id.
func MachineQueue(id string) string { return "machine_" + id }

// nameRE is what a class or machine name may be: River's queue names.
var nameRE = regexp.MustCompile(`^[a-z0-9]+(?:[_-][a-z0-9]+)*$`)

// CheckName says what is wrong with a class or machine name, or nil.
func CheckName(what, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%s %q: want lower-case letters and digits, words joined by single - or _", what, name)
	}
	return nil
}

// DefaultMachine is the machine name of this host: its hostname, lower
// case, with every run of other characters turned into one -.
func DefaultMachine() string {
	s := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(measure.MachineID()), "-"), "-")
	if s == "" {
		return "unknown"
	}
	return s
}

// workerClientID is the River client ID of the worker of machine whose
// process is instance (newInstance): River records it in a job's
// attempted_by, which is how the server finds the machine and process
// taking a job (workerOf).
func workerClientID(machine, instance string) string { return "worker." + machine + "." + instance }

// instanceRE is what an instance ID is: newInstance's hex digits.
var instanceRE = regexp.MustCompile(`^[0-9a-f]+$`)

// newInstance returns a random ID for this worker process: a process
// started again gets another one even where its pid repeats (pid 1 in a
// container).
func newInstance() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	return hex.EncodeToString(b[:])
}

// workerOf returns the machine and process instance of a worker's River
// client ID (false for another client: the server's).
func workerOf(clientID string) (machine, instance string, ok bool) {
	rest, ok := strings.CutPrefix(clientID, "worker.")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return "", "", false
	}
	if !instanceRE.MatchString(rest[i+1:]) || CheckName("machine", rest[:i]) != nil {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// MaxAttempts is how often a build, round or orchestration job is
// tried (a rescue after its worker died counts; River's default is 25,
// days of retries for an error that will not go away). A snoozed
// orchestration does not count.
const MaxAttempts = 5

// Grace is added to the job file's timeouts to make a River job's timeout:
// what fetching the repository, restoring a build or storing runs may
// take beside the build or the runs themselves.
const Grace = 2 * time.Minute

// JobSpec carries an atomic job to a worker: its job file's contents, the
// file's path (repo: is relative to it) and the atomic job's name.
type JobSpec struct {
	File string `json:"file"`
	Data []byte `json:"data"`
	Name string `json:"name"`
	// Bound, when set, is the one machine whose runs the job's
	// measurements are (a triage's: see triage.go). Load puts it in the
	// runs' environment as BoundEnv, which is part of the job's key, so
	// that the store keeps each machine's runs of the job apart and a
	// triage never pairs or pools runs of two machines. Builds do not see
	// it: their keys, and so the builds themselves, are shared by every
	// machine of the class.
	Bound string `json:"bound,omitempty"`
}

// BoundEnv is the run environment variable that names the machine a
// bound job's runs are taken on (JobSpec.Bound).
const BoundEnv = "PERFBOT_FLEET_MACHINE"

// Load parses the spec's job file and picks its atomic job.
func (s JobSpec) Load() (*job.Job, error) {
	jobs, err := job.Parse(s.File, s.Data)
	if err != nil {
		return nil, err
	}
	j, err := job.Pick(s.File, jobs, s.Name)
	if err != nil || s.Bound == "" {
		return j, err
	}
	env := make(map[string]string, len(j.Run.Env)+1)
	for k, v := range j.Run.Env {
		env[k] = v
	}
	env[BoundEnv] = s.Bound
	j.Run.Env = env
	return j, nil
}

// SpecOf makes the spec of atomic job j from its job file, as read now.
func SpecOf(j *job.Job, data []byte) JobSpec {
	return JobSpec{File: filepath.Clean(j.File), Data: data, Name: j.Name}
}

// BuildArgs is a perfbot.build job: one commit under one variant, built
// on a machine of Class.
type BuildArgs struct {
	Job     JobSpec     `json:"job"`
	Commit  string      `json:"commit"`
	Variant job.Variant `json:"variant"`
	Class   string      `json:"class"`
	// Knobs are the files of the server's knobs folder that Variant's
	// environment names (knobfiles.go): the worker builds with them.
	Knobs *KnobFiles `json:"knobs,omitempty"`
	// Move counts how often this build was queued again after the worker
	// building it was found gone (see [Client.gone]), so that the new job
	// is not taken for the abandoned one by River's uniqueness.
	Move int `json:"move,omitempty"`
}

// Kind is River's name for build jobs.
func (BuildArgs) Kind() string { return "perfbot.build" }

// InsertOpts puts a build in its class's queue, once: a build already
// queued, running or done is not queued again (River's unique jobs).
func (a BuildArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ClassQueue(a.Class), UniqueOpts: river.UniqueOpts{ByArgs: true}, MaxAttempts: MaxAttempts}
}

// BuildOutput is what a build job records as its output.
type BuildOutput struct {
	Key     string `json:"key"`
	Status  string `json:"status"` // store.BuildStatus
	Error   string `json:"error,omitempty"`
	Machine string `json:"machine"`
	// Artifacts are the build's artifacts, path -> SHA-256: the rounds
	// that run it carry them (Slot.Artifacts).
	Artifacts map[string]string `json:"artifacts,omitempty"`
}

// Slot is one run of a round: the task of measure.Task, in terms a worker
// can act on.
type Slot struct {
	Commit   string      `json:"commit"`
	Variant  job.Variant `json:"variant"`
	Index    int         `json:"index"` // run number; 0 for a warm-up
	BuildKey string      `json:"build"`
	// Artifacts are the SHA-256 of the build's artifacts the round was
	// planned with (BuildOutput.Artifacts): the machine runs exactly
	// those.
	Artifacts map[string]string `json:"artifacts,omitempty"`
}

// RoundArgs is a perfbot.round job: the slots of one round, taken in
// order on Machine.
type RoundArgs struct {
	Job     JobSpec `json:"job"`
	Class   string  `json:"class"`
	Machine string  `json:"machine"`
	Session string  `json:"session"`
	Round   int     `json:"round"` // the round's place in its measurement, for messages
	// Move counts how often the rounds of this pass were queued again
	// after their machine stopped answering (so that the new job is not
	// taken for the cancelled one by River's uniqueness).
	Move  int    `json:"move,omitempty"`
	Slots []Slot `json:"slots"`
}

// Kind is River's name for round jobs.
func (RoundArgs) Kind() string { return "perfbot.round" }

// InsertOpts puts a round in its machine's queue, once.
func (a RoundArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: MachineQueue(a.Machine), UniqueOpts: river.UniqueOpts{ByArgs: true}, MaxAttempts: MaxAttempts}
}

// RoundOutput is what a round job records: its runs, each already stored.
type RoundOutput struct {
	Runs []*store.RunRecord `json:"runs"`
}

// buildTimeout is a build job's River timeout: the job file's build
// timeout and the grace.
func buildTimeout(j *job.Job) time.Duration { return j.Build.Timeout + Grace }

// roundTimeout is a round job's River timeout: the job file's run timeout
// for each slot, one build's timeout (a build the machine finishes before
// it starts the round), and the grace.
func roundTimeout(j *job.Job, slots int) time.Duration {
	return time.Duration(slots)*j.Run.Timeout + j.Build.Timeout + Grace
}

// variantName is a variant's name for messages.
func variantName(v job.Variant) string {
	if v.Name == "" {
		return "plain"
	}
	return v.Name
}

func (s Slot) String() string {
	return fmt.Sprintf("%.12s (%s) run %d", s.Commit, variantName(s.Variant), s.Index)
}
