package triage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/stats"
	"github.com/perfbot/perfbot/internal/verdict"
)

// startRuns is the first look of the paired experiments, Pinpoint's.
const startRuns = 10

// fixedRunsPerBuild is the runs per build of the fixed design the budget
// is compared with.
const fixedRunsPerBuild = 10

// engine runs the experiments and reaches the verdict.
type engine struct {
	opt   options
	lab   lab
	state *state
	res   *Result

	used map[string]int // runs used per target key
	// latest are each target's runs at its latest measurement of the most
	// runs, by target key: an experiment's column that a look did not
	// measure shows them.
	latest map[string]latestRuns
	exps   []*Experiment // in the order they first ran; Result.Experiments at the end
	insp   *inspection
	plan0  planKind // the order the layout diff suggests
	// the paired experiments, nil when not run
	plain, forcedOut, restoreOut *pairedOutcome
	// the latest sweep and the number of layouts it had; sweepTried is
	// set once a sweep was asked for (there may be none)
	sweep      *sweepOutcome
	sweepTried bool
	// realBy is the equalising experiment a real verdict rests on (with
	// the sweep agreeing), nil when it rests on the sweep alone.
	realBy *pairedOutcome
	// design and seq are the looks' group-sequential plan.
	design seqDesign
	seq    *stats.SequentialPlan
	// fixedBuilds counts the builds of the fixed design.
	fixedBuilds int
	// byIdentity is true when the verdict rests on byte-identical builds.
	byIdentity bool
	// failure says why the triage stopped: most runs of a build failed.
	failure string
	// runCounts are each target's runs and failed runs at its largest
	// measurement, by target key.
	runCounts map[string]runCount
	// failGap says, when the two commits fail at significantly different
	// rates, by how much ("" when they do not).
	failGap string
}

// latestRuns are a target's runs at its latest measurement of the most
// runs.
type latestRuns struct {
	n      int
	vals   runVals
	failed runFails
}

// runCount is a target's runs and failed runs.
type runCount struct {
	changed      bool
	n            int // runs asked for
	runs, failed int // runs taken, of which failed
	first        string
}

func (e *engine) logf(format string, args ...any) {
	fmt.Fprintf(e.opt.Log, "triage: "+format+"\n", args...)
}

// run is the decision procedure (see the package doc). A build whose runs
// mostly fail ends it as inconclusive.
func (e *engine) run(ctx context.Context) (*Result, error) {
	e.used = map[string]int{}
	e.runCounts = map[string]runCount{}
	e.latest = map[string]latestRuns{}
	e.design = design
	res, err := e.decide(ctx)
	var fr *errFailedRuns
	if errors.As(err, &fr) {
		e.failure = fr.reason
		if e.res.Metric == "" {
			e.res.Metric, e.res.Unit, e.res.Better = e.lab.metricInfo()
		}
		if e.plain == nil || e.plain.exp == nil || e.plain.exp.Outcome == OutcomeFailed {
			e.res.Change = math.NaN()
		}
		return e.finish(verdict.Inconclusive), nil
	}
	return res, err
}

// decide runs the experiments until the verdict is clear: the layout diff
// of the two plain builds (no runs), the plain comparison (one look only
// when the builds' artifacts are byte-identical), then, in the order the
// layout diff suggests, one look at a time, whatever experiment can still
// settle the verdict (rules.go).
func (e *engine) decide(ctx context.Context) (*Result, error) {
	r := e.res
	var err error
	if e.insp, err = e.lab.inspect(ctx); err != nil {
		return nil, err
	}
	r.Identical, r.Suspects = e.insp.identical, e.insp.suspects
	r.Notes = append(r.Notes, e.insp.notes...)
	if e.insp.padding != nil {
		r.Padding = strings.TrimSpace(e.insp.padding.Instructions())
	}
	if e.canRestore() && e.restoreKind() == layout.Object {
		// The data restore comes first, sharing the plain comparison's
		// rounds: the source patch decides what it builds.
		if err := e.preparePatch(ctx); err != nil {
			return nil, err
		}
	}
	e.plan0 = e.order()
	e.logf("layout diff: %s", e.plan0)
	e.plain = e.newPlain()
	if e.plan0 == planData {
		err = e.lookRestore(ctx)
	} else {
		err = e.look(ctx, e.plain)
	}
	if err != nil {
		return nil, err
	}
	r.Metric, r.Unit, r.Better = e.lab.metricInfo()
	r.Change = e.plain.d.Comparison.Change
	e.fixedBuilds = 4 + 2*(len(e.lab.layouts(e.opt.Layouts))-1)
	if e.canRestore() {
		e.fixedBuilds += 3
	}
	if err := e.save(ctx, "plain", nil); err != nil {
		return nil, err
	}
	if e.insp.identical {
		if e.plain.d.Decision != stats.Different {
			// Only the first look's runs: the verdict rests on the builds.
			e.byIdentity = true
			return e.finish(verdict.NoChange), nil
		}
		// The runs see a change the artifacts do not: it lives elsewhere.
		r.Notes = append(r.Notes, fmt.Sprintf("the build artifacts (%s) load byte-identical code and data, yet the plain comparison shows %+.1f%% (%s): "+
			"the change lives outside build.artifacts (a script, a data file, a library the benchmark loads) or the machine changed between runs; "+
			"the triage goes on as for different builds", artifactList(e.opt.Job), e.plain.d.Comparison.Change, e.plain.d.Reason))
	}
	for {
		if v, ok := e.verdict(); ok {
			// Builds that fail at different rates are never "no change":
			// a no-change verdict waits until their failures settle.
			x := e.failsPending()
			if v != verdict.NoChange || x == nil {
				return e.finish(v), nil
			}
			if err := e.look(ctx, x); err != nil {
				return nil, err
			}
			continue
		}
		s := e.next()
		if s == nil {
			return e.finish(verdict.Inconclusive), nil
		}
		if err := s(ctx); err != nil {
			return nil, err
		}
	}
}

// artifactList names a job's artifacts for a note.
func artifactList(j *job.Job) string {
	if j == nil || len(j.Build.Artifacts) == 0 {
		return "none listed"
	}
	return strings.Join(j.Build.Artifacts, ", ")
}

// measure measures the targets to n runs and counts the runs used.
func (e *engine) measure(ctx context.Context, ts []target, n int, whole bool) ([]runVals, []runFails, error) {
	vals, failed, err := e.lab.measure(ctx, ts, n, whole)
	if err != nil {
		return nil, nil, err
	}
	for i, t := range ts {
		if len(vals[i]) == 0 && len(failed[i]) == 0 {
			return nil, nil, fmt.Errorf("triage: no run of %s printed %s", t, e.metricName())
		}
		e.used[t.key()] = max(e.used[t.key()], n)
		if l, ok := e.latest[t.key()]; !ok || n >= l.n {
			e.latest[t.key()] = latestRuns{n, vals[i], failed[i]}
		}
		if c, ok := e.runCounts[t.key()]; !ok || n >= c.n {
			e.runCounts[t.key()] = runCount{changed: t.changed, n: n, runs: len(vals[i]) + len(failed[i]), failed: len(failed[i]), first: firstReason(failed[i])}
		}
	}
	return vals, failed, nil
}

func (e *engine) metricName() string {
	if name, _, _ := e.lab.metricInfo(); name != "" {
		return name
	}
	return "the metric"
}
