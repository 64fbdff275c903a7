package measure

import (
	"sync"

	"github.com/perfbot/perfbot/internal/job"
)

// Preparer is an Executor that can check, before anything is built, that
// it can take a job's runs ([Local]: that this machine can run the job's
// monitors). Notes are for the user: what the machine leaves out, such as
// hardware events perf-stat cannot count.
type Preparer interface {
	Prepare(j *job.Job) (notes []string, err error)
}

// Noter is a Progress that also shows notes; [Measure] gives each note
// once per process.
type Noter interface {
	Note(msg string)
}

// noted holds the notes already given.
var noted sync.Map

// prepare asks the executor whether it can take the job's runs, and
// passes its notes on.
func (m *measurement) prepare() error {
	p, ok := m.exec.(Preparer)
	if !ok {
		return nil
	}
	notes, err := p.Prepare(m.j)
	if err != nil {
		return err
	}
	n, ok := m.progress.(Noter)
	for _, msg := range notes {
		if _, dup := noted.LoadOrStore(msg, true); !dup && ok {
			n.Note(msg)
		}
	}
	return nil
}
