package watch

import (
	"context"
	"sort"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/report/doc"
	"github.com/perfbot/perfbot/internal/store"
)

// FindingList is the listing of perfbot findings: every store's findings,
// those that share a layout cause together (finding.GroupByCause), and
// each job's counts, as report.WriteFindingList prints it.
func (c *Config) FindingList(ctx context.Context) (*doc.FindingList, error) {
	fs, err := c.Findings(ctx)
	if err != nil {
		return nil, err
	}
	decoded := make([]*finding.Finding, len(fs))
	for i, r := range fs {
		if decoded[i], err = finding.Decode(r.Data); err != nil {
			return nil, err
		}
	}
	l := &doc.FindingList{Version: doc.FindingsVersion, Findings: []doc.FindingEntry{}, Jobs: []doc.FindingJob{}}
	for _, i := range finding.GroupByCause(decoded) {
		r := fs[i]
		l.Findings = append(l.Findings, doc.FindingEntry{Culprit: r.Culprit, Store: r.Store, State: string(r.State),
			Reason: r.Reason, Withdrawn: r.Withdrawn, Found: r.Created, Finding: r.Data})
	}
	counts := map[string]*doc.FindingJob{}
	for i, r := range fs {
		j := counts[decoded[i].Job]
		if j == nil {
			j = &doc.FindingJob{Job: decoded[i].Job}
			counts[j.Job] = j
		}
		j.Findings++
		if r.State == store.Dismissed {
			j.Dismissed++
		}
	}
	for _, j := range counts {
		l.Jobs = append(l.Jobs, *j)
	}
	sort.Slice(l.Jobs, func(a, b int) bool { return l.Jobs[a].Job < l.Jobs[b].Job })
	return l, nil
}
