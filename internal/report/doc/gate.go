// The JSON report of a pull-request gate.

package doc

import "github.com/perfbot/perfbot/internal/verdict"

// GateVersion is the version of the [Gate] document.
const GateVersion = 1

// Gate is the JSON report of perfbot gate (-f json). Outcome is pass,
// regression, alignment-artifact, inconclusive or unchanged; ExitStatus
// the status perfbot gate exits with under the job's policy; Line the
// one-line verdict the human formats start with.
type Gate struct {
	Version    int        `json:"version"`
	Outcome    string     `json:"outcome"`
	ExitStatus int        `json:"exit_status"`
	Line       string     `json:"line"`
	Reason     string     `json:"reason"`
	Job        string     `json:"job"`
	JobKey     string     `json:"job_key"`
	Base       GateCommit `json:"base"`
	Head       GateCommit `json:"head"`
	// Changed are the paths the diff touches (listed when the job
	// declares ignore: globs; else empty).
	Changed   []string       `json:"changed"`
	Identical bool           `json:"identical"`
	Settings  GateSettings   `json:"settings"`
	Looks     int            `json:"looks"`
	Planned   []int          `json:"planned_looks"`
	Pairs     int            `json:"pairs"`
	NewRuns   int            `json:"new_runs"`
	Wall      Num            `json:"wall_seconds"`
	Metrics   []GateMetric   `json:"metrics"`
	Triage    *GateTriage    `json:"triage"`
	Runner    GateRunner     `json:"runner"`
	Qualified *GateQualified `json:"qualification"`
	Notes     []string       `json:"notes"`
}

// The parts of a [Gate].
type (
	GateCommit struct {
		Commit  string `json:"commit"`
		Subject string `json:"subject"`
	}
	GateSettings struct {
		ThresholdPct Num    `json:"threshold_pct"`
		Alpha        Num    `json:"alpha"`
		MaxRuns      int    `json:"max_runs"`
		MaxTime      Num    `json:"max_time_seconds"`
		Alignment    string `json:"alignment"`
		Inconclusive string `json:"inconclusive"`
	}
	// GateMetric is one metric at the last look: Call is undecided,
	// within or regressed; Change, Lo and Hi in percent (head against
	// base); DetectablePct the smallest regression the gate catches at
	// 80 % power with its budget.
	GateMetric struct {
		Metric        string `json:"metric"`
		Unit          string `json:"unit"`
		Better        string `json:"better"`
		Gated         bool   `json:"gated"`
		ThresholdPct  Num    `json:"threshold_pct"`
		Call          string `json:"call"`
		Pairs         int    `json:"pairs"`
		BaseMedian    *Num   `json:"base_median"`
		HeadMedian    *Num   `json:"head_median"`
		Change        *Num   `json:"change_pct"`
		Lo            *Num   `json:"lo_pct"`
		Hi            *Num   `json:"hi_pct"`
		P             *Num   `json:"p"`
		Nominal       *Num   `json:"nominal"`
		DetectablePct *Num   `json:"detectable_pct"`
		Reason        string `json:"reason"`
	}
	// GateTriage is the triage of the worst regressed metric; Verdict is
	// "" and Error says why when it did not finish.
	GateTriage struct {
		Metric   string          `json:"metric"`
		Verdict  verdict.Verdict `json:"verdict"`
		Sentence string          `json:"sentence"`
		Evidence []string        `json:"evidence"`
		Runs     int             `json:"runs"`
		Wall     Num             `json:"wall_seconds"`
		Error    string          `json:"error"`
	}
	// GateRunner is the machine of the runs; Load is the 1-minute load
	// average when the gate began (null: unknown), PinnedCPU -1 for none.
	GateRunner struct {
		Machine   string `json:"machine"`
		CPUModel  string `json:"cpu_model"`
		CPUs      int    `json:"cpus"`
		Kernel    string `json:"kernel"`
		Load      *Num   `json:"load"`
		PinnedCPU int    `json:"pinned_cpu"`
	}
	// GateQualified summarises a stored qualification of the runner
	// (perfbot qualify); null when there is none.
	GateQualified struct {
		When              string         `json:"when"`
		Fit               bool           `json:"fit"`
		FalsePositiveRate Num            `json:"false_positive_rate"`
		Gates             int            `json:"gates"`
		DetectablePct     map[string]Num `json:"detectable_pct"`
	}
)
