package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/store"
)

// onlyParams rejects a parameter a page does not take, and a parameter
// given twice that it takes once (repeatable ones are listed with a
// trailing "*").
func onlyParams(q url.Values, known ...string) error {
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		switch {
		case slices.Contains(known, k+"*"):
		case !slices.Contains(known, k):
			var take []string
			for _, n := range known {
				take = append(take, strings.TrimSuffix(n, "*"))
			}
			if len(take) == 0 {
				return errorf(http.StatusBadRequest, "unknown parameter %q (this page takes none)", k)
			}
			return errorf(http.StatusBadRequest, "unknown parameter %q (this page takes %s)", k, strings.Join(take, ", "))
		case len(q[k]) > 1:
			return errorf(http.StatusBadRequest, "parameter %s is given %d times: give it once", k, len(q[k]))
		}
	}
	return nil
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// validRev says whether a revision is one git could mean (a hash, branch,
// tag, HEAD~2, main^, v1.0): letters, digits and ./_-~^@{}, not starting
// with "-".
func validRev(rev string) bool {
	if rev == "" || len(rev) > 200 || strings.HasPrefix(rev, "-") {
		return false
	}
	for _, c := range rev {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.ContainsRune("./_-~^@{}", c)) {
			return false
		}
	}
	return true
}

// resolve turns a revision into a commit: through the job's repository
// when it is here, else among the commits the store knows (tested, and
// the findings' culprits and parents) by their hex prefix.
func (c *catalog) resolve(ctx context.Context, je *jobEntry, rev string) (gitrev.Commit, error) {
	if !validRev(rev) {
		return gitrev.Commit{}, errorf(http.StatusBadRequest, "%q is not a revision (a commit hash, branch or tag)", rev)
	}
	if r := je.repo(); r != nil {
		cm, err := r.Resolve(ctx, rev)
		if errors.Is(err, gitrev.ErrUnknownRevision) {
			return cm, errorf(http.StatusNotFound, "no commit %s in %s", rev, r.Dir)
		}
		return cm, err
	}
	if len(rev) < 4 || !isHex(rev) {
		return gitrev.Commit{}, errorf(http.StatusBadRequest, "%q: the job's repository is not on this machine, so give at least 4 hex digits of a commit the store knows", rev)
	}
	st, err := je.store()
	if err != nil {
		return gitrev.Commit{}, err
	}
	known := map[string]string{} // hash -> subject
	for _, v := range c.variants(ctx, je) {
		ts, err := c.tested(ctx, je, v)
		if err != nil {
			return gitrev.Commit{}, err
		}
		for h := range ts.byCommit {
			known[h] = ""
		}
	}
	fs, err := st.Findings(ctx)
	if err != nil {
		return gitrev.Commit{}, err
	}
	for _, f := range fs {
		known[f.Culprit] = ""
		if d, err := finding.Decode(f.Data); err == nil && d.Parent != "" {
			known[d.Parent] = ""
		}
	}
	var match []string
	rev = strings.ToLower(rev)
	for h := range known {
		if strings.HasPrefix(h, rev) {
			match = append(match, h)
		}
	}
	switch len(match) {
	case 0:
		return gitrev.Commit{}, errorf(http.StatusNotFound, "no commit %s in the store of job %s", rev, je.Name)
	case 1:
		return gitrev.Commit{Hash: match[0]}, nil
	}
	return gitrev.Commit{}, errorf(http.StatusBadRequest, "commit %s is ambiguous: %d commits of the store start so", rev, len(match))
}

// metricInfo finds a stored metric of the job.
func (c *catalog) metricInfo(ctx context.Context, je *jobEntry, name string) (store.MetricInfo, error) {
	ms := c.metrics(ctx, je)
	for _, m := range ms {
		if m.Name == name {
			return m, nil
		}
	}
	return store.MetricInfo{}, badParam("metric", name, "job "+je.Name+" has no such metric (it has "+metricNames(ms)+")")
}
