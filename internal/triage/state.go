package triage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/verdict"
)

// StateKind is the kind under which triages keep their progress in the
// store's state table (store.PutState).
const StateKind = "triage"

// state is a triage's progress, kept in the store after every step so that
// a killed triage can say where it stopped; the runs themselves are in the
// store, so rerunning the same triage replays the stored runs and
// continues.
type state struct {
	// Stage is the last step stored: "plain, 10 runs", "layout sweep, 4
	// layouts", ..., "done".
	Stage   string
	Started time.Time
	Updated time.Time
	// Verdict and Sentence are set when done.
	Verdict  verdict.Verdict `json:",omitempty"`
	Sentence string          `json:",omitempty"`
	Runs     int             `json:",omitempty"`

	key string
}

func loadState(ctx context.Context, st *store.Store, key string) (*state, error) {
	s := &state{key: key}
	data, err := st.GetState(ctx, StateKind, key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("triage: reading stored progress: %w", err)
	}
	if err := json.Unmarshal(data, s); err != nil {
		// A damaged record only loses the progress note: the runs are safe.
		return &state{key: key}, nil
	}
	s.key = key
	return s, nil
}

// save stores the progress; res is set when the triage is done.
func (e *engine) save(ctx context.Context, stage string, res *Result) error {
	s := e.state
	if s == nil {
		return nil
	}
	now := time.Now()
	if s.Started.IsZero() || s.Stage == "done" {
		s.Started = now
	}
	s.Stage, s.Updated = stage, now
	if res != nil {
		s.Verdict, s.Sentence, s.Runs = res.Verdict, res.Sentence, res.Runs
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if e.opt.Env.Store == nil {
		return nil
	}
	if err := e.opt.Env.Store.PutState(ctx, StateKind, s.key, data); err != nil {
		return fmt.Errorf("triage: storing progress: %w", err)
	}
	return nil
}

// knobsDir is where the knobs' padding files of a store go.
func knobsDir(st *store.Store) string {
	return filepath.Join(st.Dir(), "knobs")
}
