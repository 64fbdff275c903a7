package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Tested is one commit that perfbot watch measured for a job: the rounds
// in which it ran together with its reference (the commit tested before
// it, re-measured in the same rounds), so every step of a history is a
// comparison within one session.
type Tested struct {
	Job     string // job key
	Variant string // "" for the plain build
	Commit  string
	Branch  string
	Ref     string // the reference commit measured in the same rounds; "" for the first
	Session string
	Rounds  []int // the run numbers of the compared rounds
	Cycle   int64
	When    time.Time
	Layout  json.RawMessage // the commit's layout summary; may be nil
}

// PutTested records (or replaces) a tested commit.
func (s *Store) PutTested(ctx context.Context, t *Tested) error {
	rounds, _ := json.Marshal(t.Rounds)
	layout := string(t.Layout)
	if layout == "" {
		layout = "null"
	}
	if err := checkText("job key", t.Job, "variant", t.Variant, "commit", t.Commit, "branch", t.Branch,
		"reference", t.Ref, "session", t.Session, "layout", layout); err != nil {
		return fmt.Errorf("store: put tested %s: %w", t.Commit, err)
	}
	return s.write(ctx, "put tested "+t.Commit, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO tested (job_key, variant, commit_hash, branch, ref_commit, session, rounds, cycle, tested_unix_ns, layout)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (job_key, variant, commit_hash) DO UPDATE SET branch = excluded.branch,
				ref_commit = excluded.ref_commit, session = excluded.session, rounds = excluded.rounds,
				cycle = excluded.cycle, tested_unix_ns = excluded.tested_unix_ns, layout = excluded.layout`,
			t.Job, t.Variant, t.Commit, t.Branch, t.Ref, t.Session, string(rounds), t.Cycle, t.When.UnixNano(), layout)
		return err
	})
}

// TestedCommits returns the commits tested for a job and variant, by
// commit hash.
func (s *Store) TestedCommits(ctx context.Context, job, variant string) (map[string]Tested, error) {
	out := map[string]Tested{}
	err := s.read(ctx, "list tested commits", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT commit_hash, branch, ref_commit, session, rounds, cycle, tested_unix_ns, layout
			FROM tested WHERE job_key = ? AND variant = ?`, job, variant)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t := Tested{Job: job, Variant: variant}
			var rounds, layout string
			var when int64
			if err := rows.Scan(&t.Commit, &t.Branch, &t.Ref, &t.Session, &rounds, &t.Cycle, &when, &layout); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(rounds), &t.Rounds); err != nil {
				return fmt.Errorf("tested %s: rounds: %w", t.Commit, err)
			}
			t.When = time.Unix(0, when)
			if layout != "null" {
				t.Layout = json.RawMessage(layout)
			}
			out[t.Commit] = t
		}
		return rows.Err()
	})
	return out, err
}

// TestedVersion says how many commits are tested for a job and variant,
// and when the newest record was written: it changes whenever a commit is
// tested (or tested again), so a reader can keep what it built from
// TestedCommits until it does. It reads the table's index only.
func (s *Store) TestedVersion(ctx context.Context, job, variant string) (n int, last time.Time, err error) {
	var ns int64
	err = s.read(ctx, "tested version", func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(tested_unix_ns), 0) FROM tested WHERE job_key = ? AND variant = ?`,
			job, variant).Scan(&n, &ns)
	})
	return n, time.Unix(0, ns), err
}

// TestedVariants returns the variants of a job that have tested commits
// (its histories: "" the plain build's, then those under layout knobs),
// sorted.
func (s *Store) TestedVariants(ctx context.Context, job string) ([]string, error) {
	return s.column(ctx, "list tested variants", `SELECT DISTINCT variant FROM tested WHERE job_key = ? ORDER BY variant`, job)
}

// Finding states a person sets.
type FindingState string

// The states of a finding.
const (
	Untriaged    FindingState = "untriaged"
	Acknowledged FindingState = "acknowledged"
	Dismissed    FindingState = "dismissed"
)

// FindingRecord is one finding as stored: one per culprit commit.
type FindingRecord struct {
	Culprit   string // full hash
	State     FindingState
	Reason    string // why dismissed
	Withdrawn bool   // later cycles no longer see the change
	Data      json.RawMessage
	MessageID string   // of its mail, once sent
	SentTo    []string // the recipients it was sent to
	Created   time.Time
	Updated   time.Time
}

// PutFinding stores a finding's data, creating it untriaged, or updating
// the data of an existing one (its state, reason and sent mail are kept;
// it is no longer withdrawn).
func (s *Store) PutFinding(ctx context.Context, culprit string, data []byte) (created bool, err error) {
	if err := checkText("culprit", culprit, "data", string(data)); err != nil {
		return false, fmt.Errorf("store: put finding %s: %w", culprit, err)
	}
	now := time.Now().UnixNano()
	err = s.write(ctx, "put finding "+culprit, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO findings (culprit, state, reason, withdrawn, data, message_id, sent_to, created_unix_ns, updated_unix_ns)
			VALUES (?, ?, '', 0, ?, '', '[]', ?, ?) ON CONFLICT (culprit) DO NOTHING`, culprit, string(Untriaged), string(data), now, now)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		if created = n == 1; created {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE findings SET data = ?, withdrawn = 0, updated_unix_ns = ? WHERE culprit = ?`, string(data), now, culprit)
		return err
	})
	return created, err
}

// Finding returns the finding of a culprit, or an error wrapping
// ErrNotFound.
func (s *Store) Finding(ctx context.Context, culprit string) (*FindingRecord, error) {
	fs, err := s.findings(ctx, `WHERE culprit = ?`, culprit)
	if err != nil {
		return nil, err
	}
	if len(fs) == 0 {
		return nil, fmt.Errorf("finding %s: %w", culprit, ErrNotFound)
	}
	return &fs[0], nil
}

// Findings returns every finding, newest first.
func (s *Store) Findings(ctx context.Context) ([]FindingRecord, error) {
	return s.findings(ctx, `ORDER BY created_unix_ns DESC, culprit`)
}

func (s *Store) findings(ctx context.Context, where string, args ...any) ([]FindingRecord, error) {
	var out []FindingRecord
	err := s.read(ctx, "list findings", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT culprit, state, reason, withdrawn, data, message_id, sent_to, created_unix_ns, updated_unix_ns
			FROM findings `+where, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f FindingRecord
			var data, sent string
			var created, updated int64
			if err := rows.Scan(&f.Culprit, &f.State, &f.Reason, &f.Withdrawn, &data, &f.MessageID, &sent, &created, &updated); err != nil {
				return err
			}
			f.Data = json.RawMessage(data)
			_ = json.Unmarshal([]byte(sent), &f.SentTo)
			f.Created, f.Updated = time.Unix(0, created), time.Unix(0, updated)
			out = append(out, f)
		}
		return rows.Err()
	})
	return out, err
}

// SetFindingState sets the state a person gave a finding; a dismissal
// needs a reason.
func (s *Store) SetFindingState(ctx context.Context, culprit string, state FindingState, reason string) error {
	switch state {
	case Untriaged, Acknowledged:
	case Dismissed:
		if reason == "" {
			return errors.New("dismissing a finding needs a reason")
		}
	default:
		return fmt.Errorf("unknown finding state %q (want untriaged, acknowledged or dismissed)", state)
	}
	if err := checkText("reason", reason); err != nil {
		return fmt.Errorf("store: finding %s: %w", culprit, err)
	}
	return s.updateFinding(ctx, culprit, `state = ?, reason = ?`, string(state), reason)
}

// WithdrawFinding marks a finding whose change later cycles no longer see.
func (s *Store) WithdrawFinding(ctx context.Context, culprit string) error {
	return s.updateFinding(ctx, culprit, `withdrawn = 1`)
}

// MarkSent records that a finding's mail went out: at least once, never
// twice to the same recipients.
func (s *Store) MarkSent(ctx context.Context, culprit, messageID string, to []string) error {
	sent, _ := json.Marshal(to) // valid UTF-8, NUL escaped
	if err := checkText("Message-ID", messageID); err != nil {
		return fmt.Errorf("store: finding %s: %w", culprit, err)
	}
	return s.updateFinding(ctx, culprit, `message_id = ?, sent_to = ?`, messageID, string(sent))
}

func (s *Store) updateFinding(ctx context.Context, culprit, set string, args ...any) error {
	return s.write(ctx, "update finding "+culprit, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE findings SET `+set+`, updated_unix_ns = ? WHERE culprit = ?`,
			append(args, time.Now().UnixNano(), culprit)...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("finding %s: %w", culprit, ErrNotFound)
		}
		return nil
	})
}
