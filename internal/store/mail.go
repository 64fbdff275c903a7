package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// MailStatus is where one mail to one recipient stands.
type MailStatus string

// The states of an outbox row. Pending and failed rows are due when their
// next attempt time has come; the others are final.
const (
	MailPending    MailStatus = "pending"    // not tried yet
	MailSent       MailStatus = "sent"       // the server accepted it
	MailRefused    MailStatus = "refused"    // refused for good (5xx, or a header perfbot will not write)
	MailFailed     MailStatus = "failed"     // tried and failed for now (server down, 4xx): tried again later
	MailSuperseded MailStatus = "superseded" // a later revision of the finding's mail replaced it before it went out
)

// MailKind says whether a mail opens a finding's thread or follows it.
type MailKind string

// The kinds of a finding's mail.
const (
	MailFirst  MailKind = "first"
	MailUpdate MailKind = "update"
)

// Mail is one message of a finding to one recipient: the outbox row of
// (culprit, revision, recipient), which makes each message go out at most
// once per recipient.
type Mail struct {
	Culprit   string
	Revision  int // 1 for the first mail, then one per update
	Recipient string
	Kind      MailKind
	MessageID string
	Summary   string // JSON: what this revision says (package watch's)
	Status    MailStatus
	Attempts  int
	Error     string // the last failure or refusal
	// NextAttempt is when a pending or failed mail is due.
	NextAttempt time.Time
	SentAs      string // the Message-ID it went out in: its own, or a digest's
	Updated     time.Time
}

func (m *Mail) check() error {
	switch m.Status {
	case MailPending, MailSent, MailRefused, MailFailed, MailSuperseded:
	default:
		return fmt.Errorf("unknown mail status %q", m.Status)
	}
	switch {
	case m.Kind != MailFirst && m.Kind != MailUpdate:
		return fmt.Errorf("unknown mail kind %q", m.Kind)
	case m.Revision < 1:
		return fmt.Errorf("mail revision %d: want 1 or more", m.Revision)
	case m.Culprit == "" || m.Recipient == "":
		return fmt.Errorf("a mail needs a culprit and a recipient")
	}
	return checkText("culprit", m.Culprit, "recipient", m.Recipient, "Message-ID", m.MessageID, "summary", m.Summary,
		"error", m.Error, "sent as", m.SentAs)
}

// AddMail puts mails into the outbox; a row that is already there (the
// same culprit, revision and recipient) is kept as it is. It returns how
// many were added.
func (s *Store) AddMail(ctx context.Context, ms []Mail) (added int, err error) {
	for i := range ms {
		if err := ms[i].check(); err != nil {
			return 0, fmt.Errorf("store: add mail: %w", err)
		}
	}
	now := time.Now().UnixNano()
	err = s.write(ctx, "add mail", func(tx *sql.Tx) error {
		added = 0
		for _, m := range ms {
			res, err := tx.ExecContext(ctx, `INSERT INTO mail_outbox (culprit, revision, recipient, kind, message_id, summary, status, attempts, error,
				next_attempt_unix_ns, sent_as, updated_unix_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (culprit, revision, recipient) DO NOTHING`,
				m.Culprit, m.Revision, m.Recipient, string(m.Kind), m.MessageID, m.Summary, string(m.Status), m.Attempts, m.Error,
				m.NextAttempt.UnixNano(), m.SentAs, now)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			added += int(n)
		}
		return nil
	})
	return added, err
}

// Mails returns a finding's mails by revision and recipient.
func (s *Store) Mails(ctx context.Context, culprit string) ([]Mail, error) {
	return s.mails(ctx, "list mails of "+culprit, `WHERE culprit = ? ORDER BY revision, recipient`, culprit)
}

// DueMail returns the pending and failed mails whose next attempt is at
// or before now, by culprit, revision and recipient.
func (s *Store) DueMail(ctx context.Context, now time.Time) ([]Mail, error) {
	return s.mails(ctx, "list due mail", `WHERE status IN (?, ?) AND next_attempt_unix_ns <= ? ORDER BY culprit, revision, recipient`,
		string(MailPending), string(MailFailed), now.UnixNano())
}

func (s *Store) mails(ctx context.Context, what, where string, args ...any) ([]Mail, error) {
	var out []Mail
	err := s.read(ctx, what, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT culprit, revision, recipient, kind, message_id, summary, status, attempts, error,
			next_attempt_unix_ns, sent_as, updated_unix_ns FROM mail_outbox `+where, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var m Mail
			var next, updated int64
			if err := rows.Scan(&m.Culprit, &m.Revision, &m.Recipient, &m.Kind, &m.MessageID, &m.Summary, &m.Status, &m.Attempts, &m.Error,
				&next, &m.SentAs, &updated); err != nil {
				return err
			}
			m.NextAttempt, m.Updated = time.Unix(0, next), time.Unix(0, updated)
			out = append(out, m)
		}
		return rows.Err()
	})
	return out, err
}

// RecordMail records what became of a due mail: its status, attempts,
// error, next attempt and the Message-ID it went out as. A mail that is
// no longer pending or failed (sent, refused or superseded meanwhile) is
// left as it is, so a sent mail is never marked for sending again.
func (s *Store) RecordMail(ctx context.Context, m Mail) error {
	if err := m.check(); err != nil {
		return fmt.Errorf("store: record mail: %w", err)
	}
	return s.write(ctx, "record mail to "+m.Recipient, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE mail_outbox SET status = ?, attempts = ?, error = ?, next_attempt_unix_ns = ?, sent_as = ?,
			updated_unix_ns = ? WHERE culprit = ? AND revision = ? AND recipient = ? AND status IN (?, ?)`,
			string(m.Status), m.Attempts, m.Error, m.NextAttempt.UnixNano(), m.SentAs, time.Now().UnixNano(),
			m.Culprit, m.Revision, m.Recipient, string(MailPending), string(MailFailed))
		return err
	})
}

// SupersedeMail marks the pending and failed mails of a finding's
// revisions before revision superseded: a newer one replaces them. It
// returns how many it marked.
func (s *Store) SupersedeMail(ctx context.Context, culprit string, revision int) (n int, err error) {
	err = s.write(ctx, "supersede mail of "+culprit, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE mail_outbox SET status = ?, updated_unix_ns = ? WHERE culprit = ? AND revision < ? AND status IN (?, ?)`,
			string(MailSuperseded), time.Now().UnixNano(), culprit, revision, string(MailPending), string(MailFailed))
		if err != nil {
			return err
		}
		k, _ := res.RowsAffected()
		n = int(k)
		return nil
	})
	return n, err
}
