package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/riverqueue/river"

	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/job"
)

// FleetQueue puts a page's actions on a fleet's River queue (perfbot serve
// --db): comparisons, bisections and triages become the fleet's
// orchestration jobs, measured by the workers of Class (a triage on one
// machine of it). Watch cycles are not fleet jobs yet: they wrap
// ErrNotQueued, and the page shows their command.
type FleetQueue struct {
	Server *fleet.Server
	Class  string // the machine class that measures the actions
}

// Enqueue queues a compare, bisect or triage action and returns its
// River job id.
func (q FleetQueue) Enqueue(ctx context.Context, a Action) (string, error) {
	if a.Kind != CompareAction && a.Kind != BisectAction && a.Kind != TriageAction {
		return "", fmt.Errorf("%s on a fleet: %w", a.Kind, ErrNotQueued)
	}
	spec, err := q.spec(a)
	if err != nil {
		return "", err
	}
	var args river.JobArgs
	switch a.Kind {
	case CompareAction:
		args = fleet.CompareArgs{Job: spec, Class: q.Class, Commits: a.Commits}
	case BisectAction:
		args = fleet.BisectArgs{Job: spec, Class: q.Class, Good: a.Commits[0], Bad: a.Commits[1], Metric: a.Metric}
	case TriageAction:
		args = fleet.TriageArgs{Job: spec, Class: q.Class, Base: a.Commits[0], Changed: a.Commits[1], Metric: a.Metric}
	}
	row, err := fleet.Submit(ctx, q.Server.River, args)
	if errors.Is(err, fleet.ErrBadRequest) {
		return "", errorf(http.StatusBadRequest, "%s", err)
	} else if err != nil {
		return "", err
	}
	return strconv.FormatInt(row.ID, 10), nil
}

// spec reads the action's job file as the fleet's jobs carry it.
func (q FleetQueue) spec(a Action) (fleet.JobSpec, error) {
	data, err := os.ReadFile(a.JobFile)
	if err != nil {
		return fleet.JobSpec{}, fmt.Errorf("job %s: %w", a.JobName, err)
	}
	jobs, err := job.Parse(a.JobFile, data)
	if err != nil {
		return fleet.JobSpec{}, err
	}
	j, err := job.Pick(a.JobFile, jobs, a.JobName)
	if err != nil {
		return fleet.JobSpec{}, err
	}
	return fleet.SpecOf(j, data), nil
}

// Queued lists the fleet's comparisons, bisections and triages that are
// not done,
// for the overview's "running".
func (q FleetQueue) Queued(ctx context.Context) ([]Queued, error) {
	p := river.NewJobListParams().First(100).
		Kinds(fleet.CompareArgs{}.Kind(), fleet.BisectArgs{}.Kind(), fleet.TriageArgs{}.Kind()).
		States("available", "pending", "retryable", "running", "scheduled")
	res, err := q.Server.River.JobList(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []Queued
	for _, row := range res.Jobs {
		act := Action{Kind: CompareAction}
		switch row.Kind {
		case fleet.CompareArgs{}.Kind():
			var args fleet.CompareArgs
			if json.Unmarshal(row.EncodedArgs, &args) == nil {
				act.JobFile, act.JobName, act.Commits = args.Job.File, args.Job.Name, args.Commits
			}
		case fleet.BisectArgs{}.Kind():
			act.Kind = BisectAction
			var args fleet.BisectArgs
			if json.Unmarshal(row.EncodedArgs, &args) == nil {
				act.JobFile, act.JobName, act.Metric = args.Job.File, args.Job.Name, args.Metric
				act.Commits = []string{args.Good, args.Bad}
			}
		case fleet.TriageArgs{}.Kind():
			act.Kind = TriageAction
			var args fleet.TriageArgs
			if json.Unmarshal(row.EncodedArgs, &args) == nil {
				act.JobFile, act.JobName, act.Metric = args.Job.File, args.Job.Name, args.Metric
				act.Commits = []string{args.Base, args.Changed}
			}
		}
		when := row.CreatedAt
		if row.AttemptedAt != nil {
			when = *row.AttemptedAt
		}
		out = append(out, Queued{ID: strconv.FormatInt(row.ID, 10), Action: act, State: string(row.State), Updated: when})
	}
	return out, nil
}
