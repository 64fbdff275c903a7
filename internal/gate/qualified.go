package gate

import (
	"context"
	"os"

	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// qualification reads the newest stored qualification of this runner for
// job key (perfbot qualify), for the report to quote; nil when the store
// holds none, the runs are taken elsewhere (a fleet: its machines are
// qualified on themselves), or the newest one of this host name was of
// another machine (CI runners reuse host names: its CPU model or number
// of CPUs differ from this one's).
func qualification(ctx context.Context, env measure.Env, jobKey string, this Runner) (*Qualification, error) {
	if env.Remote() || env.Store == nil {
		return nil, nil
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown" // as perfbot qualify records it
	}
	qs, err := env.Store.Qualifications(ctx, jobKey, host, 1)
	if err != nil || len(qs) == 0 {
		return nil, err
	}
	if r := qs[0].Runner; (this.CPUModel != "" && r.CPUModel != this.CPUModel) || (this.CPUs > 0 && r.NProc != this.CPUs) {
		return nil, nil
	}
	return fromStore(qs[0]), nil
}

func fromStore(q store.Qualification) *Qualification {
	out := &Qualification{When: q.Finished, Gates: q.Gates, Fit: q.Fit, DetectablePct: map[string]float64{}}
	if q.Gates > 0 {
		out.FalsePositiveRate = float64(q.FalsePositives) / float64(q.Gates)
	}
	for _, m := range q.Metrics {
		out.DetectablePct[m.Name] = m.DetectablePct
	}
	return out
}
