package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/store"
)

// ServerConfig configures a fleet's server.
type ServerConfig struct {
	Pool    *pgxpool.Pool
	Results *store.Store
	// Dir is the server's workspace: its clones of the jobs' repositories.
	Dir string
	// RescueAfter is River's RescueStuckJobsAfter: a job still running
	// this long after its start, and past its own timeout (which follows
	// the job file: see jobs.go), is taken to have lost its worker and is
	// given to another (default 1 minute: the job's timeout is the real
	// bound).
	RescueAfter time.Duration
	// DeadAfter: a machine without a heartbeat this long is dead and its
	// unfinished rounds move to another machine (default 30s).
	DeadAfter time.Duration
	// Lease is the timeout of an orchestration job (default 1h); one that
	// outlives it runs again at once from what is stored.
	Lease time.Duration
	// Orchestrations is how many comparisons and bisections the server
	// runs at once (default 16).
	Orchestrations int
	Log            func(format string, args ...any)
	// GC bounds the build worktrees of the server's workspace, collected
	// every GCEvery (gc.go; zero: 20 GiB and 168 h, every hour).
	GC      build.Budget
	GCEvery time.Duration
	// LockPing is how often the server pings the connections of the
	// advisory locks it holds (a watch file's scheduler lock, a running
	// cycle's liveness lock): one that dropped lost its lock, and the
	// scheduling or the cycle stops within a ping (default
	// DefaultLockPing: lock.go).
	LockPing time.Duration
	// BlobGrace: the GC (every GCEvery) removes the blobs nothing refers
	// to that were stored or reused longer ago than this (default
	// DefaultBlobGrace: blobgc.go).
	BlobGrace time.Duration
}

// Server is a fleet's server: River's leader (it rescues the jobs of dead
// workers and schedules retries), the orchestrator of comparisons and
// bisections, and the fleet's HTTP API.
type Server struct {
	cfg    ServerConfig
	River  *river.Client[pgx.Tx]
	client *Client
	ws     *workspace
	gc     gcLoop
	rescue rescueLoop // of watch cycles whose server died (watchrescue.go)
}

// NewServer migrates the database and makes the server's River client
// (not started: see Start).
func NewServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.RescueAfter <= 0 {
		cfg.RescueAfter = time.Minute
	}
	if cfg.Lease <= 0 {
		cfg.Lease = time.Hour
	}
	if cfg.Orchestrations <= 0 {
		cfg.Orchestrations = 16
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	ws, err := migrateAndOpen(ctx, cfg.Pool, cfg.Dir)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, ws: ws}
	workers := river.NewWorkers()
	river.AddWorker(workers, &compareWorker{s: s})
	river.AddWorker(workers, &bisectWorker{s: s})
	river.AddWorker(workers, &watchWorker{s: s})
	river.AddWorker(workers, &sensitivityWorker{s: s})
	river.AddWorker(workers, &triageWorker{s: s})
	// The machines' kinds, registered (never worked here) so that the
	// leader's rescuer knows their timeouts.
	river.AddWorker(workers, &buildWorker{})
	river.AddWorker(workers, &roundWorker{})
	s.River, err = river.NewClient(riverpgxv5.New(cfg.Pool), &river.Config{
		ID:                   fmt.Sprintf("server.%d", os.Getpid()),
		Queues:               map[string]river.QueueConfig{QueueControl: {MaxWorkers: cfg.Orchestrations}},
		Workers:              workers,
		RescueStuckJobsAfter: cfg.RescueAfter,
		Logger:               slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		ws.Close()
		return nil, err
	}
	s.client = &Client{Pool: cfg.Pool, River: s.River, Results: cfg.Results, DeadAfter: cfg.DeadAfter, Log: cfg.Log}
	s.client.init()
	return s, nil
}

// Start starts working: leading the queue and orchestrating.
func (s *Server) Start(ctx context.Context) error {
	s.gc.start(s.ws.local.Dir(), s.cfg.GC, s.cfg.GCEvery,
		func(ctx context.Context) (BlobGC, error) { return CollectBlobs(ctx, s.cfg.Pool, s.cfg.BlobGrace) }, s.cfg.Log)
	if err := s.River.Start(ctx); err != nil {
		return err
	}
	s.rescue.start(s)
	return nil
}

// Stop stops the server: orchestrations in progress are cancelled (they
// resume from the store when the server starts again; nothing measured
// is lost: the machines store their runs as they take them).
func (s *Server) Stop(ctx context.Context) error {
	s.rescue.stop()
	err := s.River.StopAndCancel(ctx)
	s.gc.stop()
	return errors.Join(err, s.ws.Close())
}

// EnqueueCompare queues a comparison; its id names it in the API.
func (s *Server) EnqueueCompare(ctx context.Context, a CompareArgs) (*rivertype.JobRow, error) {
	return Submit(ctx, s.River, a)
}

// EnqueueTriage queues a triage.
func (s *Server) EnqueueTriage(ctx context.Context, a TriageArgs) (*rivertype.JobRow, error) {
	return Submit(ctx, s.River, a)
}

// EnqueueBisect queues a bisection.
func (s *Server) EnqueueBisect(ctx context.Context, a BisectArgs) (*rivertype.JobRow, error) {
	return Submit(ctx, s.River, a)
}

// ErrBadRequest is wrapped by Submit's errors for arguments it refuses
// (a bad class, missing commits, a job file that does not parse): the
// submitter's mistake, which an HTTP API answers with 400.
var ErrBadRequest = errors.New("bad request")

// badRequest is a refused submission: its message is err's, and it wraps
// ErrBadRequest.
type badRequest struct{ err error }

func (e badRequest) Error() string   { return e.err.Error() }
func (e badRequest) Unwrap() []error { return []error{ErrBadRequest, e.err} }

// Submit checks and queues an orchestration job (CompareArgs or
// BisectArgs) with any River client of the fleet's database, an
// insert-only one included ([InsertOnly]). Arguments it refuses give an
// error wrapping ErrBadRequest.
func Submit(ctx context.Context, c *river.Client[pgx.Tx], a river.JobArgs) (*rivertype.JobRow, error) {
	if err := check(a); err != nil {
		return nil, badRequest{err}
	}
	res, err := c.Insert(ctx, a, nil)
	if err != nil {
		return nil, err
	}
	return res.Job, nil
}

// check says what is wrong with a submission's arguments.
//
// Submit checks and queues CompareArgs, BisectArgs and TriageArgs.
func check(a river.JobArgs) error {
	if c, ok := a.(interface{ check() error }); ok { // the kinds that check themselves
		return c.check()
	}
	switch a := a.(type) {
	case CompareArgs:
		if err := CheckName("class", a.Class); err != nil {
			return err
		}
		if len(a.Commits) < 2 {
			return errors.New("a comparison needs at least two commits")
		}
		if _, err := a.Job.Load(); err != nil {
			return err
		}
	case BisectArgs:
		if err := CheckName("class", a.Class); err != nil {
			return err
		}
		if a.Good == "" || a.Bad == "" || a.Metric == "" {
			return errors.New("a bisection needs good and bad commits, a metric and a machine class")
		}
		j, err := a.Job.Load()
		if err != nil {
			return err
		}
		cfg := bisect.Config{Job: j, Good: a.Good, Bad: a.Bad, Metric: a.Metric, Mode: bisect.Mode(a.Mode), Preset: a.Preset, Layouts: a.Layouts}
		if err := cfg.Check(); err != nil {
			return err
		}
	case TriageArgs:
		return a.check()
	default:
		return fmt.Errorf("%s jobs are not submitted: they are queued by the fleet", a.Kind())
	}
	return nil
}

// InsertOnly is a River client that only queues jobs (perfbot submit).
func InsertOnly(pool *pgxpool.Pool) (*river.Client[pgx.Tx], error) {
	return river.NewClient(riverpgxv5.New(pool), &river.Config{})
}

// Await waits for job id to be finalized and returns it: completed, or an
// error saying how it failed.
func Await(ctx context.Context, c *river.Client[pgx.Tx], id int64, poll time.Duration) (*rivertype.JobRow, error) {
	cl := &Client{River: c, Poll: poll}
	row, err := cl.wait(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	if row.State != rivertype.JobStateCompleted {
		return row, failure(row)
	}
	return row, nil
}

// Handler is the fleet's HTTP API (JSON):
//
//	GET  /api/machines           the machines, with their heartbeat's age and whether they live
//	GET  /api/jobs?state=S       the latest 100 jobs (of state S)
//	GET  /api/jobs/{id}          one job, with its output
//	POST /api/compare            queue a comparison (CompareArgs); answers the job
//	POST /api/bisect             queue a bisection (BisectArgs)
//	POST /api/triage             queue a triage (TriageArgs)
//	GET  /api/blobs/{sha256}     an artifact or log, by content hash
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/machines", func(w http.ResponseWriter, r *http.Request) {
		ms, ages, err := Machines(r.Context(), s.cfg.Pool, r.URL.Query().Get("class"))
		if err != nil {
			httpError(w, http.StatusInternalServerError, err)
			return
		}
		type entry struct {
			Machine
			AgeSeconds float64 `json:"age_seconds"`
			Alive      bool    `json:"alive"`
		}
		out := []entry{}
		for i, m := range ms {
			out = append(out, entry{m, ages[i].Seconds(), ages[i] < s.client.DeadAfter})
		}
		writeJSON(w, out)
	})
	mux.HandleFunc("GET /api/jobs", func(w http.ResponseWriter, r *http.Request) {
		p := river.NewJobListParams().First(100).OrderBy(river.JobListOrderByID, river.SortOrderDesc)
		if st := r.URL.Query().Get("state"); st != "" {
			p = p.States(rivertype.JobState(st))
		}
		res, err := s.River.JobList(r.Context(), p)
		if err != nil {
			httpError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, res.Jobs)
	})
	mux.HandleFunc("GET /api/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			httpError(w, http.StatusBadRequest, fmt.Errorf("job id %q: %w", r.PathValue("id"), err))
			return
		}
		row, err := s.River.JobGet(r.Context(), id)
		if errors.Is(err, river.ErrNotFound) {
			httpError(w, http.StatusNotFound, err)
			return
		} else if err != nil {
			httpError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, struct {
			*rivertype.JobRow
			Output json.RawMessage `json:"output,omitempty"`
		}{row, row.Output()})
	})
	mux.HandleFunc("POST /api/compare", func(w http.ResponseWriter, r *http.Request) {
		var a CompareArgs
		submit(w, r, s, &a, func() (river.JobArgs, error) { return a, nil })
	})
	mux.HandleFunc("POST /api/bisect", func(w http.ResponseWriter, r *http.Request) {
		var a BisectArgs
		submit(w, r, s, &a, func() (river.JobArgs, error) { return a, nil })
	})
	mux.HandleFunc("POST /api/triage", func(w http.ResponseWriter, r *http.Request) {
		var a TriageArgs
		submit(w, r, s, &a, func() (river.JobArgs, error) { return a, nil })
	})
	mux.HandleFunc("GET /api/blobs/{sha}", s.serveBlob)
	return mux
}

// MaxBody is the largest request body the API reads: the job file
// travels in it.
const MaxBody = 1 << 20

func submit(w http.ResponseWriter, r *http.Request, s *Server, into any, args func() (river.JobArgs, error)) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("request body: %w", err))
		return
	}
	a, _ := args()
	row, err := Submit(r.Context(), s.River, a)
	if errors.Is(err, ErrBadRequest) {
		httpError(w, http.StatusBadRequest, err)
		return
	} else if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	w.WriteHeader(http.StatusCreated)
	writeJSON(w, row)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func httpError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
