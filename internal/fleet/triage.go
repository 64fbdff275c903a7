package fleet

// Triage on a fleet: triage.Run over the fleet's builder and one machine.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/triage"
	"github.com/perfbot/perfbot/internal/verdict"
	"github.com/perfbot/perfbot/internal/version"
)

// TriageArgs is a perfbot.triage job: triage the change from Base to
// Changed on one machine of Class, as perfbot triage does on this one.
// The zero knobs take triage's defaults (triage.Config).
type TriageArgs struct {
	Job        JobSpec `json:"job"`
	Class      string  `json:"class"`
	Base       string  `json:"base"` // full hashes (the submitter resolves revisions)
	Changed    string  `json:"changed"`
	Metric     string  `json:"metric,omitempty"`
	Preset     string  `json:"preset,omitempty"`
	MaxRuns    int     `json:"max_runs,omitempty"`
	Alpha      float64 `json:"alpha,omitempty"`
	EffectPct  float64 `json:"effect_pct,omitempty"`
	Layouts    int     `json:"layouts,omitempty"`
	MaxLayouts int     `json:"max_layouts,omitempty"`
	Seed       int64   `json:"seed,omitempty"`
}

// Kind is River's name for triages.
func (TriageArgs) Kind() string { return "perfbot.triage" }

// InsertOpts puts triages in the server's queue.
func (TriageArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueControl, MaxAttempts: MaxAttempts}
}

// Config is the triage.Config of the arguments for job j (without Env).
func (a TriageArgs) Config(j *job.Job) triage.Config {
	return triage.Config{Job: j, Base: a.Base, Changed: a.Changed, Metric: a.Metric, Preset: a.Preset, MaxRuns: a.MaxRuns,
		Alpha: a.Alpha, EffectPct: a.EffectPct, Layouts: a.Layouts, MaxLayouts: a.MaxLayouts, Seed: a.Seed}
}

// check says what is wrong with the arguments before anything is queued.
func (a TriageArgs) check() error {
	if err := CheckName("class", a.Class); err != nil {
		return err
	}
	j, err := a.Job.Load()
	if err != nil {
		return err
	}
	return a.Config(j).Check()
}

// TriageOutput is what a triage records: its verdict, the machine, the
// report as the versioned JSON document of perfbot triage -f json
// (Document: docs/json.md, readable in the queue's UI and stable across
// perfbot versions), and the whole result for the submitting perfbot to
// print any other format exactly as perfbot triage does (Report:
// encoding/gob, which keeps every experiment's table and the floats JSON
// cannot carry; read only by the perfbot version that wrote it, Wrote);
// or the error that ended it (a build that fails, a metric no run
// printed).
type TriageOutput struct {
	Verdict  verdict.Verdict `json:"verdict,omitempty"`
	Sentence string          `json:"sentence,omitempty"`
	Machine  string          `json:"machine,omitempty"`
	Document json.RawMessage `json:"document,omitempty"`
	Report   []byte          `json:"report,omitempty"`
	Wrote    string          `json:"wrote,omitempty"` // the perfbot version that encoded Report
	Error    string          `json:"error,omitempty"`
}

// triageOutput makes the output of a triage that ended with res and err.
func triageOutput(res *triage.Result, err error) (TriageOutput, error) {
	var out TriageOutput
	if err != nil {
		out.Error = err.Error()
	}
	if res == nil {
		return out, nil
	}
	out.Verdict, out.Sentence, out.Machine = res.Verdict, res.Sentence, res.Machine
	var doc bytes.Buffer
	if err := report.WriteTriage(&doc, res, report.TriageOptions{Format: report.FormatJSON, Machine: res.Machine}); err != nil {
		return out, fmt.Errorf("recording the triage's report: %w", err)
	}
	out.Document = bytes.TrimSpace(doc.Bytes())
	data, err := encodeGob(res)
	if err != nil {
		return out, fmt.Errorf("recording the triage's result: %w", err)
	}
	out.Report, out.Wrote = data, version.Get().String()
	return out, nil
}

// Result decodes the triage's result (nil when it ended with an error).
// One another perfbot version recorded that this one cannot decode is an
// error naming both: its JSON document (Document) is then the report to
// read.
func (o TriageOutput) Result() (*triage.Result, error) {
	if len(o.Report) == 0 {
		return nil, nil
	}
	var res triage.Result
	if err := decodeGob(o.Report, &res); err != nil {
		if v := version.Get().String(); o.Wrote != v {
			return nil, fmt.Errorf("the triage's result was recorded by perfbot %s and this perfbot (%s) cannot read it (%v): its JSON report (-f json) still can be", o.Wrote, v, err)
		}
		return nil, fmt.Errorf("the triage's recorded result: %w", err)
	}
	return &res, nil
}

type triageWorker struct {
	river.WorkerDefaults[TriageArgs]
	s *Server
}

func (tw *triageWorker) Timeout(*river.Job[TriageArgs]) time.Duration { return tw.s.cfg.Lease }

func (tw *triageWorker) Work(ctx context.Context, rj *river.Job[TriageArgs]) error {
	s, a := tw.s, rj.Args
	j, b, err := s.ws.open(ctx, a.Job, a.Base, a.Changed)
	if err != nil {
		return err
	}
	cfg := a.Config(j)
	if err := cfg.Check(); err != nil {
		return river.JobCancel(err)
	}
	res, err := s.triageOn(ctx, a.Job, a.Class, b, cfg, s.jobLog(rj.ID))
	if err != nil && ctx.Err() != nil {
		return again(ctx, err)
	}
	out, err := triageOutput(res, err)
	if err == nil {
		err = river.RecordOutput(ctx, out)
	}
	if err != nil {
		s.jobLog(rj.ID)("%v", err)
	}
	return err
}

// jobLog is the server's log for orchestration job id.
func (s *Server) jobLog(id int64) func(format string, args ...any) {
	return func(format string, args ...any) { s.cfg.Log("job %d: "+format, append([]any{id}, args...)...) }
}

// triageOn runs triage.Run with cfg (its Env replaced) on one machine of
// class, the quietest live one: every experiment's rounds go to it, and
// its runs are its own in the store (Remote.Bind). The builds are the
// class's, their artifacts copied into the server's workspace (b's), where
// the layout diff and the source patch read them. When the machine dies
// the triage starts again on another live machine of the class (the
// restarted one if it is the only one): its experiments are taken there
// anew; what the dead machine measured stays stored under its own name
// and is not mixed in. The result names the machine.
func (s *Server) triageOn(ctx context.Context, spec JobSpec, class string, b *build.Builder, cfg triage.Config,
	logf func(format string, args ...any)) (*triage.Result, error) {
	remote := s.client.For(spec, class)
	defer remote.Close()
	var lost []string
	for {
		m, err := s.triageMachine(ctx, spec, class, cfg, lost)
		if err != nil {
			return nil, err
		}
		bound := remote.Bind(m)
		j, _, err := s.ws.open(ctx, bound.Spec(), cfg.Base, cfg.Changed)
		if err != nil {
			return nil, err
		}
		c := cfg
		c.Job = j
		c.Env = measure.Env{Store: s.cfg.Results, Repo: b.Repo, Builder: &serverCopies{copies: localCopy{remote, s.ws}, b: b},
			Executor: bound, Logf: logf}
		logf("triage of %s -> %s: every experiment on machine %s of class %s", gitrev.Short(cfg.Base), gitrev.Short(cfg.Changed), m, class)
		res, err := triage.Run(ctx, c)
		var ml *MachineLostError
		if errors.As(err, &ml) {
			lost = append(lost, m)
			logf("%v: the triage starts again on another machine of class %s (the runs %s took stay stored, apart)", ml, class, m)
			continue
		}
		if err != nil {
			return nil, err
		}
		res.Machine = s.describe(ctx, m, class)
		// Every report format prints the notes (the machine line is the
		// email's alone).
		res.Notes = append(res.Notes, "every experiment ran on "+res.Machine)
		if len(lost) > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("machine %v stopped answering during the triage: every experiment was taken again on %s", lost, m))
		}
		return res, nil
	}
}

// triageStateKind is the store's state kind under which the server keeps
// the machine each triage question was last taken on.
const triageStateKind = "fleet-triage-machine"

// triageMachine chooses the machine of a triage: the one the same
// question was taken on before while it lives and was not lost (a triage
// resumed after a server restart, or asked again, reuses its runs), else
// the quietest live one of class; the choice is kept in the store.
func (s *Server) triageMachine(ctx context.Context, spec JobSpec, class string, cfg triage.Config, lost []string) (string, error) {
	key := fmt.Sprintf("%s/%s/%s/%s/%s", class, cfg.Job.Key(), cfg.Base, cfg.Changed, cfg.Metric)
	data, err := s.cfg.Results.GetState(ctx, triageStateKind, key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	if prev := string(data); prev != "" && !slices.Contains(lost, prev) {
		if alive, err := s.client.alive(ctx, prev); err == nil && alive {
			return prev, nil
		}
	}
	m, err := s.client.Quietest(ctx, class, lost)
	if err != nil {
		return "", err
	}
	if err := s.cfg.Results.PutState(ctx, triageStateKind, key, []byte(m)); err != nil {
		return "", err
	}
	return m, nil
}

// describe names machine m of class for a report: its name, class, CPU
// model and kernel as it registered them.
func (s *Server) describe(ctx context.Context, m, class string) string {
	ms, _, err := Machines(ctx, s.cfg.Pool, class)
	if err == nil {
		for _, x := range ms {
			if x.ID == m {
				return fmt.Sprintf("fleet machine %s (class %s): %s, %d CPUs, %s", m, class, x.CPUModel, x.CPUs, x.Kernel)
			}
		}
	}
	return fmt.Sprintf("fleet machine %s (class %s)", m, class)
}
