package qualify

import (
	"context"
	"fmt"
	"math"

	"github.com/perfbot/perfbot/internal/store"
)

// Latest is the newest qualification of a job on the runner of that
// hostname ("": this machine's), nil when it has none.
func Latest(ctx context.Context, st *store.Store, jobKey, hostname string) (*store.Qualification, error) {
	if hostname == "" {
		hostname = ThisRunner().Hostname
	}
	qs, err := st.Qualifications(ctx, jobKey, hostname, 1)
	if err != nil || len(qs) == 0 {
		return nil, err
	}
	return &qs[0], nil
}

// Quote is the line the gate prints about a qualification: "runner
// qualified 2026-12-02: false positives 1/200 at alpha 0.05; detectable
// 4.1 %" (or "runner not fit ...", and "runner not qualified" for nil).
func Quote(q *store.Qualification) string {
	if q == nil {
		return "runner not qualified (perfbot qualify)"
	}
	state := "qualified"
	if !q.Fit {
		state = "not fit"
	}
	s := fmt.Sprintf("runner %s %s: false positives %d/%d at alpha %g", state, q.Finished.UTC().Format("2006-01-02"), q.FalsePositives, q.Gates, q.Alpha)
	d := 0.0
	for _, m := range q.Metrics {
		d = math.Max(d, m.DetectablePct)
		if math.IsNaN(m.DetectablePct) {
			d = math.NaN()
			break
		}
	}
	switch {
	case math.IsNaN(d):
		s += "; some metric undetectable"
	case len(q.Metrics) > 0:
		s += fmt.Sprintf("; detectable %.3g %%", d)
	}
	return s
}
