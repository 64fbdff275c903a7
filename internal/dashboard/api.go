package dashboard

// APIVersion is the version of every GET /api/ answer (docs/json.md): it
// changes when a name or a shape changes, not for a new optional field.
const APIVersion = 1

// The answers of the API that are lists: an object with the version and
// the list, never a bare array.
type (
	// JobList is GET /api/jobs.
	JobList struct {
		Version int          `json:"version"`
		Jobs    []JobSummary `json:"jobs"`
	}
	// FindingList is GET /api/findings.
	FindingList struct {
		Version  int              `json:"version"`
		Findings []FindingSummary `json:"findings"`
	}
	// CycleList is GET /api/cycles.
	CycleList struct {
		Version int        `json:"version"`
		Cycles  []CycleRow `json:"cycles"`
	}
)
