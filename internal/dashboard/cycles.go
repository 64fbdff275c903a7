package dashboard

import (
	"net/http"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/store"
)

// cycleRows is how many recent job cycles the cycles page lists per store.
const cycleRows = 100

// CycleRow is one job's part of a watch cycle, as the page and
// /api/cycles show it.
type CycleRow struct {
	Store    string    `json:"store"`
	Job      string    `json:"job"`
	Name     string    `json:"name"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Tested   int       `json:"tested"`
	Failed   bool      `json:"failed"`
	Panicked bool      `json:"panicked"`
	Noticed  bool      `json:"noticed"`
	Error    string    `json:"error,omitempty"`
	Summary  string    `json:"-"` // the error's first line
}

// failing is a job whose newest cycles failed.
type failing struct {
	Name   string
	Cycles int
	Since  time.Time
}

type cyclesData struct {
	Rows    []CycleRow
	Failing []failing
}

// cycles reads the newest job cycles of every store: what perfbot watch
// did, and each error or panic that ended a job's cycle (store.CycleRecord).
func (s *Server) cycles(r *http.Request) (*cyclesData, error) {
	d := &cyclesData{}
	for _, src := range s.cat.stores {
		st, err := src.open()
		if err != nil {
			return nil, err
		}
		if st == nil {
			continue
		}
		cs, err := st.Cycles(r.Context(), "", cycleRows)
		if err != nil {
			return nil, err
		}
		streaks := map[string]*failing{}
		done := map[string]bool{}
		for _, c := range cs { // newest first
			row := CycleRow{Store: src.dir, Job: c.Job, Name: c.Name, Started: c.Started, Finished: c.Finished, Tested: c.Tested,
				Failed: c.Failed(), Panicked: c.Panicked, Noticed: c.Noticed, Error: c.Error}
			row.Summary, _, _ = strings.Cut(c.Error, "\n")
			d.Rows = append(d.Rows, row)
			streak(streaks, done, c)
		}
		for _, f := range streaks {
			d.Failing = append(d.Failing, *f)
		}
	}
	return d, nil
}

// streak counts c into its job's failure streak (the failed cycles newer
// than its newest cycle that went through).
func streak(streaks map[string]*failing, done map[string]bool, c store.CycleRecord) {
	if done[c.Job] {
		return
	}
	if !c.Failed() {
		done[c.Job] = true
		return
	}
	f := streaks[c.Job]
	if f == nil {
		f = &failing{Name: c.Name}
		streaks[c.Job] = f
	}
	f.Cycles++
	f.Since = c.Started
}

func (s *Server) cyclesPage(r *http.Request) (string, any, error) {
	d, err := s.cycles(r)
	return "cycles", d, err
}

func (s *Server) cyclesAPI(r *http.Request) (any, error) {
	d, err := s.cycles(r)
	if err != nil {
		return nil, err
	}
	if d.Rows == nil {
		d.Rows = []CycleRow{}
	}
	return CycleList{Version: APIVersion, Cycles: d.Rows}, nil
}
