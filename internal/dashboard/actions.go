package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
)

// ActionKind is work a page can ask for.
type ActionKind string

// Action kinds. None runs inside the server.
const (
	// CompareAction measures commits (base first) in interleaved rounds:
	// perfbot compare.
	CompareAction ActionKind = "compare"
	// BisectAction bisects a metric's change between two commits (good,
	// bad): perfbot bisect.
	BisectAction ActionKind = "bisect"
	// TriageAction triages a change from a base to a changed commit:
	// perfbot triage.
	TriageAction ActionKind = "triage"
	// RerunAction runs a watch cycle now: perfbot watch --once.
	RerunAction ActionKind = "rerun"
)

// Action is work a person asked for from a page: what to do, on which
// job and commits.
type Action struct {
	Kind ActionKind `json:"kind"`
	// Job is the job's URL id (its key); the server fills in JobFile,
	// JobName and Store.
	Job     string   `json:"job,omitempty"`
	Commits []string `json:"commits,omitempty"` // compare: base first; bisect: good, bad; triage: base, changed
	Metric  string   `json:"metric,omitempty"`

	JobFile string `json:"job_file,omitempty"`
	JobName string `json:"job_name,omitempty"`
	JobKey  string `json:"job_key,omitempty"`
	Store   string `json:"store,omitempty"`
	// Watch is the watch file, for a rerun.
	Watch string `json:"watch,omitempty"`
	// Matrix is true when the job file holds several atomic jobs (the
	// command then names this one with --job).
	Matrix bool `json:"matrix,omitempty"`
	// Database is true when the job's store is a database (the fleet's
	// PostgreSQL store), which no --store names: Store then describes it,
	// and DB is its URL without the password when the server knows it
	// (Config.DB), for perfbot submit. Class is the fleet's machine class
	// of the server's queue ("" without one).
	Database bool   `json:"database,omitempty"`
	DB       string `json:"db,omitempty"`
	Class    string `json:"class,omitempty"`
	// dbPassword: the database's URL had a password, left out of DB.
	dbPassword bool
}

// Enqueuer puts an action on the job queue (the fleet's River queue) and
// returns its id there. It must not do the work itself: a worker does. An
// action the queue does not take (a kind its workers do not know) is an
// error wrapping ErrNotQueued: the page then shows its command, as
// without a queue.
type Enqueuer interface {
	Enqueue(ctx context.Context, a Action) (id string, err error)
}

// ErrNotQueued is wrapped by an Enqueuer's error for an action its queue
// does not take.
var ErrNotQueued = errors.New("the job queue does not take this action")

// Lister is an Enqueuer that can also list what its queue holds, for the
// overview's "running".
type Lister interface {
	Queued(ctx context.Context) ([]Queued, error)
}

// Queued is an action on the queue.
type Queued struct {
	ID      string
	Action  Action
	State   string // the queue's word: available, running, ...
	Updated time.Time
}

// Command is the perfbot command line that does the action, quoted for
// the shell: what the page shows when no queue is wired.
func (a Action) Command() string {
	if a.Database && a.Kind != RerunAction {
		return a.databaseCommand()
	}
	q := job.ShellQuote
	args := []string{"perfbot"}
	jobArgs := func() {
		args = append(args, q(a.JobFile))
		if a.Store != "" && a.JobFile != "" && filepath.Join(filepath.Dir(a.JobFile), ".perfbot") != a.Store {
			args = append(args, "--store", q(a.Store))
		}
		if a.Matrix {
			args = append(args, "--job", q(a.JobName))
		}
	}
	metric := func() {
		if a.Metric != "" {
			args = append(args, "--metric", q(a.Metric))
		}
	}
	switch a.Kind {
	case CompareAction:
		args = append(args, "compare")
		jobArgs()
		for _, c := range a.Commits {
			args = append(args, q(gitrev.Short(c)))
		}
	case BisectAction:
		args = append(args, "bisect")
		jobArgs()
		if len(a.Commits) == 2 {
			args = append(args, "--good", q(gitrev.Short(a.Commits[0])), "--bad", q(gitrev.Short(a.Commits[1])))
		}
		metric()
	case TriageAction:
		args = append(args, "triage")
		jobArgs()
		for _, c := range a.Commits {
			args = append(args, q(gitrev.Short(c)))
		}
		metric()
	case RerunAction:
		args = append(args, "watch", q(a.Watch), "--once")
	}
	return strings.Join(args, " ")
}

// databaseCommand is the command of an action on a job whose store is a
// database. A comparison, bisection or triage is submitted to the fleet
// (perfbot submit, when the server knows the database's URL and the job
// file holds one job), so that its results land in that database;
// otherwise the command runs on a machine with the job's repository, into
// the store next to its job file, and a shell comment after it says so.
func (a Action) databaseCommand() string {
	q := job.ShellQuote
	if a.DB == "" || a.Matrix || (a.Kind != CompareAction && a.Kind != BisectAction && a.Kind != TriageAction) {
		local := a
		local.Database, local.Store = false, ""
		return local.Command() + "  # on a machine with the job's repository: its results go to the .perfbot next to the job file, not to the fleet's database"
	}
	class := a.Class
	if class == "" {
		class = "CLASS" // perfbot serve --db has no --class: which machines is the submitter's choice
	}
	args := []string{"perfbot", "submit", string(a.Kind), "--db", q(a.DB), "--class", q(class), q(a.JobFile)}
	switch a.Kind {
	case CompareAction, TriageAction:
		for _, c := range a.Commits {
			args = append(args, q(gitrev.Short(c)))
		}
	case BisectAction:
		if len(a.Commits) == 2 {
			args = append(args, "--good", q(gitrev.Short(a.Commits[0])), "--bad", q(gitrev.Short(a.Commits[1])))
		}
	}
	if a.Metric != "" && a.Kind != CompareAction {
		args = append(args, "--metric", q(a.Metric))
	}
	cmd := strings.Join(args, " ")
	if a.dbPassword {
		cmd += "  # the database's password: PGPASSWORD or ~/.pgpass"
	}
	return cmd
}

// actionAPI is POST /api/actions: checks the action, fills in its job,
// and enqueues it (202 with the queue's id), or answers 501 with the
// command to run when no queue is wired.
func (s *Server) actionAPI(r *http.Request) (int, any, error) {
	var a Action
	if err := decode(r, &a); err != nil {
		return 0, nil, err
	}
	if err := s.complete(r.Context(), &a); err != nil {
		return 0, nil, err
	}
	if s.cfg.Queue == nil {
		return 0, nil, &httpError{code: http.StatusNotImplemented, command: a.Command(),
			msg: "no job queue is wired to this dashboard (the fleet's queue, perfbot serve --db): run the command instead"}
	}
	id, err := s.cfg.Queue.Enqueue(r.Context(), a)
	if errors.Is(err, ErrNotQueued) {
		return 0, nil, &httpError{code: http.StatusNotImplemented, command: a.Command(), msg: err.Error() + ": run the command instead"}
	}
	if err != nil {
		return 0, nil, fmt.Errorf("enqueueing %s: %w", a.Kind, err)
	}
	return http.StatusAccepted, map[string]any{"id": id, "action": a, "command": a.Command()}, nil
}

// complete checks an action's fields and fills in its job's.
func (s *Server) complete(ctx context.Context, a *Action) error {
	want := map[ActionKind]int{CompareAction: -2, BisectAction: 2, TriageAction: 2, RerunAction: 0}
	n, ok := want[a.Kind]
	if !ok {
		return badParam("kind", string(a.Kind), "want compare, bisect, triage or rerun")
	}
	if a.Kind == RerunAction {
		if s.cat.watch == nil {
			return errorf(http.StatusBadRequest, "rerun runs a watch cycle, and this dashboard serves no watch file")
		}
		a.Watch = s.cat.watch.File
		return nil
	}
	switch {
	case n > 0 && len(a.Commits) != n:
		return errorf(http.StatusBadRequest, "%s takes %d commits, not %d", a.Kind, n, len(a.Commits))
	case n < 0 && len(a.Commits) < -n:
		return errorf(http.StatusBadRequest, "%s takes at least %d commits, not %d", a.Kind, -n, len(a.Commits))
	}
	je, err := s.cat.job(ctx, a.Job)
	if err != nil {
		return err
	}
	if je.File == "" {
		return errorf(http.StatusBadRequest, "job %s: the store does not say where its job file is, so nothing can run it", je.Name)
	}
	for i, c := range a.Commits {
		commit, err := s.cat.resolve(ctx, je, c)
		if err != nil {
			return err
		}
		a.Commits[i] = commit.Hash
	}
	if a.Metric != "" {
		if _, err := s.cat.metricInfo(ctx, je, a.Metric); err != nil {
			return err
		}
	}
	s.fillJob(a, je)
	return nil
}

// fillJob fills in the action's job and where its results are stored.
func (s *Server) fillJob(a *Action, je *jobEntry) {
	a.JobFile, a.JobName, a.JobKey, a.Store = je.File, je.Name, je.Key, je.src.dir
	a.Database, a.DB, a.dbPassword, a.Class = je.src.database, "", false, ""
	if a.Database {
		a.DB, a.dbPassword = store.WithoutPassword(s.cfg.DB)
		if fq, ok := s.cfg.Queue.(FleetQueue); ok {
			a.Class = fq.Class
		}
	}
	if jobs, err := job.Load(je.File); err == nil && len(jobs) > 1 {
		a.Matrix = true
	}
}

// ActionView is an action offered on a page: its command, and whether the
// page can enqueue it.
type ActionView struct {
	Label   string `json:"label"`
	Action  Action `json:"action"`
	Command string `json:"command"`
}

// offer fills in an action for a page; nil when it cannot run (no job
// file).
func (s *Server) offer(ctx context.Context, label string, a Action) *ActionView {
	if err := s.complete(ctx, &a); err != nil {
		return nil
	}
	return &ActionView{Label: label, Action: a, Command: a.Command()}
}
