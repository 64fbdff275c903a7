package dashboard

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// branchList is a branch's first-parent list as of its head.
type branchList struct {
	head    string
	commits []gitrev.Commit
}

// branches are the branches a job's history is kept on: the watch file's,
// else those its commits were tested on.
func (c *catalog) branches(ctx context.Context, je *jobEntry, variant string) []string {
	if len(je.Branches) > 0 {
		return je.Branches
	}
	ts, err := c.tested(ctx, je, variant)
	if err != nil {
		return nil
	}
	return ts.branches
}

// commits is the branch's first-parent list, oldest first: from the
// repository when it is here (cached by the branch's head), else the
// commits tested on the branch in the order they were tested (without
// subjects).
func (c *catalog) commits(ctx context.Context, je *jobEntry, variant, branch string) ([]gitrev.Commit, error) {
	if r := je.repo(); r != nil {
		head, err := r.Resolve(ctx, branch)
		if err == nil {
			key := r.Dir + "\x00" + branch
			c.mu.Lock()
			bl, ok := c.branchLs[key]
			c.mu.Unlock()
			if ok && bl.head == head.Hash {
				return bl.commits, nil
			}
			list, err := r.FirstParents(ctx, head.Hash, 0)
			if err != nil {
				return nil, err
			}
			c.mu.Lock()
			c.branchLs[key] = branchList{head: head.Hash, commits: list}
			c.mu.Unlock()
			return list, nil
		}
	}
	set, err := c.tested(ctx, je, variant)
	if err != nil {
		return nil, err
	}
	var ts []store.Tested
	for _, t := range set.byCommit {
		if t.Branch == branch {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, func(a, b store.Tested) int {
		if c := a.When.Compare(b.When); c != 0 {
			return c
		}
		return strings.Compare(a.Commit, b.Commit)
	})
	out := make([]gitrev.Commit, len(ts))
	for i, t := range ts {
		out[i] = gitrev.Commit{Hash: t.Commit}
	}
	return out, nil
}

// series reads a history, as perfbot history does (history.Run: the
// steps, the ratios to the anchor and the changes watch handled), through
// the store's memo: only commits tested since the last read are compared.
func (c *catalog) series(ctx context.Context, je *jobEntry, variant, branch, metricName string) (*history.Series, error) {
	st, err := je.store()
	if err != nil {
		return nil, err
	}
	list, err := c.commits(ctx, je, variant, branch)
	if err != nil {
		return nil, err
	}
	ts, err := c.tested(ctx, je, variant)
	if err != nil {
		return nil, err
	}
	return history.Run(ctx, history.Config{Store: st, JobKey: je.Key, JobName: je.Name, Metric: metricName, Variant: variant,
		Commits: list, Alpha: je.Alpha, Memo: &je.src.memo, Tested: ts.byCommit})
}

// historyOf resolves a history's parameters (metric, variant, branch;
// each defaults to the first there is) and reads it.
func (c *catalog) historyOf(ctx context.Context, je *jobEntry, metricName, variant, branch string) (*history.Series, *historyParams, error) {
	hp := &historyParams{}
	hp.metrics = c.metrics(ctx, je)
	if len(hp.metrics) == 0 {
		return nil, nil, errorf(http.StatusNotFound, "job %s has no stored runs yet", je.Name)
	}
	if metricName == "" {
		metricName = hp.metrics[0].Name
	}
	i := slices.IndexFunc(hp.metrics, func(m store.MetricInfo) bool { return m.Name == metricName })
	if i < 0 {
		return nil, nil, badParam("metric", metricName, "job "+je.Name+" has no such metric (it has "+metricNames(hp.metrics)+")")
	}
	hp.metric = hp.metrics[i]
	hp.variants = c.variants(ctx, je)
	for _, id := range hp.variants {
		if variant != "" && variantLabel(id) == variant {
			variant = id // given by its label (align64)
		}
	}
	if len(hp.variants) == 0 {
		return nil, nil, errorf(http.StatusNotFound, "job %s has no tested commit yet: perfbot watch keeps its history", je.Name)
	}
	if !slices.Contains(hp.variants, variant) {
		if variant != "" {
			return nil, nil, badParam("variant", variant, "job "+je.Name+" has no such history (it has "+strings.Join(labels(hp.variants), ", ")+")")
		}
		variant = hp.variants[0]
	}
	hp.variant = variant
	hp.branches = c.branches(ctx, je, variant)
	if branch == "" && len(hp.branches) > 0 {
		branch = hp.branches[0]
	}
	if !slices.Contains(hp.branches, branch) {
		return nil, nil, badParam("branch", branch, "job "+je.Name+" is not watched on it (branches: "+strings.Join(hp.branches, ", ")+")")
	}
	hp.branch = branch
	s, err := c.series(ctx, je, variant, branch, metricName)
	if err != nil {
		return nil, nil, err
	}
	return s, hp, nil
}

// historyParams are what a history page was resolved to, and the choices.
type historyParams struct {
	metrics  []store.MetricInfo
	metric   store.MetricInfo
	variants []string
	variant  string
	branches []string
	branch   string
}

func labels(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = variantLabel(v)
	}
	return out
}

func metricNames(ms []store.MetricInfo) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// ownFirst orders metrics as compare does: the job's own, then perfbot's.
func ownFirst(ms []store.MetricInfo) []store.MetricInfo {
	out := slices.Clone(ms)
	slices.SortStableFunc(out, func(a, b store.MetricInfo) int {
		ab, bb := metric.IsBuiltin(a.Name), metric.IsBuiltin(b.Name)
		switch {
		case ab == bb:
			return 0
		case bb:
			return -1
		}
		return 1
	})
	return out
}
