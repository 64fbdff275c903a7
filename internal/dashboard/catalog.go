package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/watch"
)

// catalog is what the server serves: the stores, and the jobs they hold
// or the watch file names.
type catalog struct {
	watch  *watch.Config
	stores []*source // fixed once newCatalog returns

	// jobs and byID grow when a store gains a job (refresh): read them
	// through list and job.
	jmu       sync.RWMutex
	jobs      []*jobEntry
	byID      map[string]*jobEntry
	refreshMu sync.Mutex // one refresh at a time

	mu         sync.Mutex
	branchLs   map[string]branchList // first-parent lists by repo and branch
	testedSets map[string]*testedSet // by store, job and variant
}

// source is one results store.
type source struct {
	dir  string // its folder, or for a store opened by the caller its name (Path)
	mu   sync.Mutex
	st   *store.Store // opened on first use: a watch may not have run yet
	memo history.Memo
	// opened: the caller opened the store and closes it.
	opened bool
	// database: the store is a database (PostgreSQL), not a folder.
	database bool
}

// jobEntry is one atomic job.
type jobEntry struct {
	ID   string // in URLs: the job key (with -2, -3 when two stores hold one key)
	Key  string
	Name string
	File string   // its job file ("" when only the store knows it)
	Job  *job.Job // parsed from the file, or from the stored spec; nil when neither
	// From the watch file (defaults otherwise).
	Alpha, Effect float64
	Report        string
	Branches      []string // the watched branches; nil: those it was tested on
	Watched       bool
	src           *source
}

// newCatalog reads the watch file's jobs and the stores' jobs.
func newCatalog(ctx context.Context, w *watch.Config, dirs []string, opened []*store.Store) (*catalog, error) {
	c := &catalog{watch: w, byID: map[string]*jobEntry{}, branchLs: map[string]branchList{}, testedSets: map[string]*testedSet{}}
	if w != nil {
		for _, jc := range w.Jobs {
			jobs, err := job.Load(jc.File)
			if err != nil {
				return nil, err
			}
			src := c.source(filepath.Join(filepath.Dir(jc.File), ".perfbot"))
			for _, j := range jobs {
				c.add(&jobEntry{Key: j.Key(), Name: j.Name, File: j.File, Job: j, Alpha: jc.Alpha, Effect: jc.Effect, Report: jc.Report,
					Branches: w.Branches, Watched: true, src: src})
			}
		}
	}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(filepath.Join(abs, store.DBName)); err != nil {
			return nil, fmt.Errorf("--store %s: no perfbot results store there (%s: %v)", d, store.DBName, errors.Unwrap(err))
		}
		c.source(abs)
	}
	for _, st := range opened {
		src := &source{dir: st.Dir(), st: st, opened: true}
		if st.Path() != filepath.Join(st.Dir(), store.DBName) {
			// A database: named by its (redacted) URL, not by the folder
			// it keeps its files in.
			src.dir, src.database = st.Path(), true
		}
		c.stores = append(c.stores, src)
	}
	// Every job a store holds, beside those of the watch file.
	if err := c.refresh(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// refresh adds the jobs the stores gained since they were last read (a
// comparison submitted to the fleet after perfbot serve started, a watch
// whose store did not exist yet): one query of each store's job keys, and
// one per new job.
func (c *catalog) refresh(ctx context.Context) error {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	for _, src := range c.stores {
		st, err := src.open()
		if err != nil {
			return err
		}
		if st == nil {
			continue
		}
		keys, err := st.JobKeys(ctx)
		if err != nil {
			return err
		}
		c.jmu.RLock()
		var fresh []string
		for _, k := range keys {
			if !slices.ContainsFunc(c.jobs, func(je *jobEntry) bool { return je.Key == k && je.src == src }) {
				fresh = append(fresh, k)
			}
		}
		c.jmu.RUnlock()
		for _, k := range fresh {
			name, spec, err := st.GetJob(ctx, k)
			if err != nil {
				return err
			}
			je := &jobEntry{Key: k, Name: name, Alpha: watch.DefaultAlpha, Effect: watch.DefaultEffect, Report: "regressions", src: src}
			var j job.Job
			if json.Unmarshal(spec, &j) == nil && j.Name != "" {
				je.Job, je.File = &j, j.File
			}
			c.add(je)
		}
	}
	return nil
}

// list is the jobs, as of now (refreshed: the caller lists them to a
// person, who expects the jobs stored since).
func (c *catalog) list(ctx context.Context) ([]*jobEntry, error) {
	if err := c.refresh(ctx); err != nil {
		return nil, err
	}
	return c.snapshot(), nil
}

// snapshot is the jobs known, without asking the stores.
func (c *catalog) snapshot() []*jobEntry {
	c.jmu.RLock()
	defer c.jmu.RUnlock()
	return slices.Clone(c.jobs)
}

// source returns the store of dir, added once.
func (c *catalog) source(dir string) *source {
	for _, s := range c.stores {
		if s.dir == dir {
			return s
		}
	}
	s := &source{dir: dir}
	c.stores = append(c.stores, s)
	return s
}

func (c *catalog) add(je *jobEntry) {
	c.jmu.Lock()
	defer c.jmu.Unlock()
	je.ID = je.Key
	for n := 2; c.byID[je.ID] != nil; n++ {
		je.ID = fmt.Sprintf("%s-%d", je.Key, n)
	}
	c.byID[je.ID] = je
	c.jobs = append(c.jobs, je)
}

// open opens the store when its database exists; nil, nil when it does
// not yet (the watch has not run).
func (s *source) open() (*store.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st != nil {
		return s.st, nil
	}
	if _, err := os.Stat(filepath.Join(s.dir, store.DBName)); err != nil {
		return nil, nil
	}
	st, err := store.Open(s.dir)
	if err != nil {
		return nil, err
	}
	s.st = st
	return st, nil
}

func (c *catalog) close() error {
	var errs []error
	for _, s := range c.stores {
		s.mu.Lock()
		if s.st != nil && !s.opened {
			errs = append(errs, s.st.Close())
			s.st = nil
		}
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

// job finds a job by its URL id, or by its name when one job has it; the
// stores are asked again when neither is known (a job stored since).
func (c *catalog) job(ctx context.Context, id string) (*jobEntry, error) {
	je, err := c.find(id)
	if err == nil {
		return je, nil
	}
	if rerr := c.refresh(ctx); rerr != nil {
		return nil, rerr
	}
	return c.find(id)
}

func (c *catalog) find(id string) (*jobEntry, error) {
	c.jmu.RLock()
	defer c.jmu.RUnlock()
	if je := c.byID[id]; je != nil {
		return je, nil
	}
	var named []*jobEntry
	for _, je := range c.jobs {
		if je.Name == id {
			named = append(named, je)
		}
	}
	switch len(named) {
	case 1:
		return named[0], nil
	case 0:
		return nil, errorf(http.StatusNotFound, "no job %q here (the jobs are listed on the overview, /api/jobs)", id)
	}
	return nil, errorf(http.StatusNotFound, "job name %q is ambiguous: %d jobs have it; use the job's key", id, len(named))
}

// store is the job's open store, or a 404 when it has none yet.
func (je *jobEntry) store() (*store.Store, error) {
	st, err := je.src.open()
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, errorf(http.StatusNotFound, "job %s has no results store yet (%s): run perfbot watch first", je.Name, je.src.dir)
	}
	return st, nil
}

// repo is the job's repository when it is on this machine.
func (je *jobEntry) repo() *gitrev.Repo {
	if je.Job == nil || je.Job.Repo == "" {
		return nil
	}
	if fi, err := os.Stat(je.Job.Repo); err != nil || !fi.IsDir() {
		return nil
	}
	return &gitrev.Repo{Dir: je.Job.Repo}
}

// variants are the job's histories: "" (plain) and the knobs' variants.
func (c *catalog) variants(ctx context.Context, je *jobEntry) []string {
	st, err := je.src.open()
	if err != nil || st == nil {
		return nil
	}
	vs, err := st.TestedVariants(ctx, je.Key)
	if err != nil {
		return nil
	}
	return vs
}

// variantLabel names a history: "plain", or the knob's name ("align64"
// of "align64@1a2b3c4d").
func variantLabel(v string) string {
	if v == "" {
		return "plain"
	}
	name, _, _ := strings.Cut(v, "@")
	return name
}

// metrics are the job's stored metrics, its own first.
func (c *catalog) metrics(ctx context.Context, je *jobEntry) []store.MetricInfo {
	st, err := je.src.open()
	if err != nil || st == nil {
		return nil
	}
	ms, err := st.Metrics(ctx, je.Key)
	if err != nil {
		return nil
	}
	return ownFirst(ms)
}
