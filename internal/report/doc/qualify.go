// The JSON report of a runner's qualification.

package doc

// QualifyVersion is the version of the qualify document.
const QualifyVersion = 1

// Qualify is the JSON report of perfbot qualify -f json.
type Qualify struct {
	Version  int             `json:"version"`
	Sentence string          `json:"sentence"`
	Fit      bool            `json:"fit"`
	Job      string          `json:"job"`
	Commit   string          `json:"commit"`
	Runner   QualifyRunner   `json:"runner"`
	Alpha    float64         `json:"alpha"`
	Runs     int             `json:"runs"`
	Failed   int             `json:"failed_runs"`
	Pairs    int             `json:"pairs"`
	Budget   QualifyBudget   `json:"budget"`
	AA       QualifyAA       `json:"aa"`
	Metrics  []QualifyMetric `json:"metrics"`
	Slowdown *QualifySlow    `json:"slowdown"`
	Advice   []string        `json:"advice"`
	TimeUp   bool            `json:"time_up"`
	Started  string          `json:"started"`
	Finished string          `json:"finished"`
	Seed     int64           `json:"seed"`
}

// QualifyRunner is the machine qualified.
type QualifyRunner struct {
	Hostname  string  `json:"hostname"`
	CPUModel  string  `json:"cpu_model"`
	Kernel    string  `json:"kernel"`
	NProc     int     `json:"nproc"`
	CPU       int     `json:"pinned_cpu"` // -1: not pinned
	LoadStart float64 `json:"load_start"`
	LoadEnd   float64 `json:"load_end"`
}

// QualifyBudget is the gate's budget every resampled gate gets.
type QualifyBudget struct {
	Pairs int    `json:"pairs"`
	Why   string `json:"why"`
}

// QualifyAA is the A/A gates' outcome.
type QualifyAA struct {
	Gates          int     `json:"gates"`
	FalsePositives int     `json:"false_positives"`
	Undecided      int     `json:"undecided"`
	Rate           float64 `json:"rate"`
	Lo             float64 `json:"rate_lo"`
	Hi             float64 `json:"rate_hi"`
	MeanPairs      float64 `json:"mean_pairs"`
}

// QualifyMetric is one gated metric's figures, in percent.
type QualifyMetric struct {
	Name          string   `json:"name"`
	Better        string   `json:"better"`
	ThresholdPct  float64  `json:"threshold_pct"`
	NoisePct      *float64 `json:"noise_pct"`
	DetectablePct *float64 `json:"detectable_pct"`
	FormulaPct    *float64 `json:"formula_pct"`
}

// QualifySlow is the planted slowdown's result.
type QualifySlow struct {
	Name     string        `json:"name"`
	Rounds   int           `json:"rounds"`
	Sizes    []QualifySize `json:"sizes"`
	Gates    int           `json:"gates"`
	Detected int           `json:"detected"`
}

// QualifySize is the slowdown's measured change of one metric.
type QualifySize struct {
	Metric string   `json:"metric"`
	Change *float64 `json:"change_pct"`
	Lo     *float64 `json:"lo_pct"`
	Hi     *float64 `json:"hi_pct"`
}
