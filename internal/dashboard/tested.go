package dashboard

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/watch"
)

// testedSet is one history's tested commits, kept while the store says
// they have not changed (store.TestedVersion), with what the pages derive
// from them: the branches, and the layout summaries decoded once. For a
// history of 10,000 commits reading and decoding them is most of a page's
// time.
type testedSet struct {
	n     int
	last  time.Time
	stamp stamp // the store's files when n and last were read

	byCommit map[string]store.Tested
	branches []string

	once    sync.Once
	layouts map[string]*watch.LayoutSummary // nil when the commit has none
}

// tested returns the job's tested commits of variant, from the cache when
// the store's version of them is unchanged.
func (c *catalog) tested(ctx context.Context, je *jobEntry, variant string) (*testedSet, error) {
	st, err := je.store()
	if err != nil {
		return nil, err
	}
	key := je.src.dir + "\x00" + je.Key + "\x00" + variant
	now, files := stampOf(je.src.dir)
	c.mu.Lock()
	ts := c.testedSets[key]
	fresh := files && ts != nil && ts.stamp == now
	c.mu.Unlock()
	if fresh {
		return ts, nil // nothing was written to the store since
	}
	// Something was written (runs, most often): did the history change?
	n, last, err := st.TestedVersion(ctx, je.Key, variant)
	if err != nil {
		return nil, err
	}
	if ts != nil && ts.n == n && ts.last.Equal(last) {
		c.mu.Lock()
		ts.stamp = now
		c.mu.Unlock()
		return ts, nil
	}
	by, err := st.TestedCommits(ctx, je.Key, variant)
	if err != nil {
		return nil, err
	}
	ts = &testedSet{n: n, last: last, stamp: now, byCommit: by}
	for _, t := range by {
		if !slices.Contains(ts.branches, t.Branch) {
			ts.branches = append(ts.branches, t.Branch)
		}
	}
	slices.Sort(ts.branches)
	c.mu.Lock()
	c.testedSets[key] = ts
	c.mu.Unlock()
	return ts, nil
}

// stamp is what the files of a store say about the last write: SQLite
// changes the database or its write-ahead log on every commit. A store
// without a database file (PostgreSQL) has none, and TestedVersion is
// asked each time.
type stamp struct {
	db, wal fileStamp
}

type fileStamp struct {
	size  int64
	mtime time.Time
}

func stampOf(dir string) (stamp, bool) {
	var s stamp
	fi, err := os.Stat(filepath.Join(dir, store.DBName))
	if err != nil {
		return s, false
	}
	s.db = fileStamp{fi.Size(), fi.ModTime()}
	if fi, err := os.Stat(filepath.Join(dir, store.DBName+"-wal")); err == nil {
		s.wal = fileStamp{fi.Size(), fi.ModTime()}
	}
	return s, true
}

// layout is a commit's layout summary; nil when it has none.
func (ts *testedSet) layout(commit string) *watch.LayoutSummary {
	ts.once.Do(func() {
		ts.layouts = make(map[string]*watch.LayoutSummary, len(ts.byCommit))
		for h, t := range ts.byCommit {
			if t.Layout == nil {
				continue
			}
			var ls watch.LayoutSummary
			if json.Unmarshal(t.Layout, &ls) == nil && ls.Error == "" {
				ts.layouts[h] = &ls
			}
		}
	})
	return ts.layouts[commit]
}
