// The JSON listing of a watch's findings.

package doc

import (
	"encoding/json"
	"time"
)

// FindingList is perfbot findings -f json: the findings of every store
// of a watch file, those that share a layout cause together, newest
// first, and each job's counts.
type FindingList struct {
	Version  int            `json:"version"`
	Findings []FindingEntry `json:"findings"`
	Jobs     []FindingJob   `json:"jobs"`
}

// FindingEntry is one finding of a [FindingList]: its state in its
// store, and the finding as watch stored it (docs/schema/finding.json).
type FindingEntry struct {
	Culprit   string          `json:"culprit"`
	Store     string          `json:"store"`
	State     string          `json:"state"`
	Reason    string          `json:"reason,omitempty"`
	Withdrawn bool            `json:"withdrawn"`
	Found     time.Time       `json:"found"`
	Finding   json.RawMessage `json:"finding"`
}

// FindingJob counts one job's findings and those dismissed.
type FindingJob struct {
	Job       string `json:"job"`
	Findings  int    `json:"findings"`
	Dismissed int    `json:"dismissed"`
}
