package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	netmail "net/mail"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/notify"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
)

// MailFindings puts the mails that st's findings call for into the
// outbox and sends those due at now through the report's mail server;
// policy is the job's report policy (regressions, changes, all). Without
// report.smtp it does nothing.
func MailFindings(ctx context.Context, rc *ReportConfig, st *store.Store, policy string, now time.Time, logf func(string, ...any)) error {
	if rc.SMTP == nil {
		return nil
	}
	if err := planMail(ctx, rc.SMTP, st, policy, now, logf); err != nil {
		return err
	}
	return deliverMail(ctx, rc, st, now, logf)
}

// Backoff bounds: a mail that failed n times is tried again after
// MailRetryFirst * 2^(n-1), at most MailRetryMax later.
const (
	MailRetryFirst = time.Minute
	MailRetryMax   = 4 * time.Hour
)

func mailBackoff(attempts int) time.Duration {
	d := MailRetryFirst
	for i := 1; i < attempts && d < MailRetryMax; i++ {
		d *= 2
	}
	return min(d, MailRetryMax)
}

// batch is one message and the outbox rows it delivers.
type batch struct {
	rows []store.Mail
	id   string
	to   []string
	msg  []byte
	err  error // the message cannot be written (refused for good)
}

// deliverMail sends the due mail: per recipient with more than
// report.smtp.digest of them, one digest; else one message per finding
// revision to its due recipients. Each row is recorded after the server
// answered: sent, refused for good, or failed with its next attempt. A
// message the server accepted is recorded as sent right after; if perfbot
// is killed between the two, the next cycle sends it again: the one way a
// recipient gets a message twice. A connection that fails (server down,
// TLS, AUTH) ends delivery for this cycle: the rest wait, failed, too.
func deliverMail(ctx context.Context, rc *ReportConfig, st *store.Store, now time.Time, logf func(string, ...any)) error {
	due, err := st.DueMail(ctx, now)
	if err != nil || len(due) == 0 {
		return err
	}
	cfg := rc.SMTP
	fs := map[string]*finding.Finding{}
	for _, m := range due {
		if fs[m.Culprit] != nil {
			continue
		}
		rec, err := st.Finding(ctx, m.Culprit)
		if err != nil {
			return err
		}
		if fs[m.Culprit], err = finding.Decode(rec.Data); err != nil {
			return err
		}
	}
	// A recipient taken out of the watch file gets no more mail.
	kept := due[:0]
	for _, m := range due {
		if slices.ContainsFunc(recipients(cfg, fs[m.Culprit]), func(r recipient) bool { return r.key == m.Recipient }) {
			kept = append(kept, m)
			continue
		}
		m.Status, m.Error = store.MailSuperseded, "no longer a recipient in the watch file"
		if err := st.RecordMail(ctx, m); err != nil {
			return err
		}
	}
	batches := mailBatches(cfg, rc.Dir, kept, fs, now)
	srv, down := cfg.Server()
	for _, b := range batches {
		var res notify.Result
		err := b.err
		switch {
		case err != nil:
		case down != nil:
			err = down
		default:
			res, err = notify.Send(ctx, srv, cfg.From, b.to, b.msg)
			var refused *notify.RefusedError
			if err != nil && !errors.As(err, &refused) {
				down = err
			}
		}
		if err := recordBatch(ctx, st, b, res, err, now, logf); err != nil {
			return err
		}
	}
	if down != nil {
		logf("watch: mail: %v (the mails wait for a later cycle)", down)
	}
	return nil
}

// mailBatches groups the due rows into messages.
func mailBatches(cfg *SMTPConfig, reportDir string, due []store.Mail, fs map[string]*finding.Finding, now time.Time) []batch {
	count := map[string]int{}
	for _, m := range due {
		count[m.Recipient]++
	}
	from := netmail.Address{Address: cfg.From}
	var out []batch
	digests := map[string]*batch{}
	var digestOrder []string
	byRev := map[string]*batch{}
	var revOrder []string
	for _, m := range due {
		if cfg.Digest > 0 && count[m.Recipient] > cfg.Digest {
			if digests[m.Recipient] == nil {
				digests[m.Recipient] = &batch{to: []string{m.Recipient}}
				digestOrder = append(digestOrder, m.Recipient)
			}
			digests[m.Recipient].rows = append(digests[m.Recipient].rows, m)
			continue
		}
		k := fmt.Sprintf("%s %d", m.Culprit, m.Revision)
		if byRev[k] == nil {
			byRev[k] = &batch{id: m.MessageID}
			revOrder = append(revOrder, k)
		}
		byRev[k].rows = append(byRev[k].rows, m)
		byRev[k].to = append(byRev[k].to, m.Recipient)
	}
	for _, k := range revOrder {
		b := byRev[k]
		f, first := fs[b.rows[0].Culprit], b.rows[0]
		h := report.MailHeader{From: from, To: addresses(cfg, f, b.to), MessageID: b.id, Date: now}
		if first.Kind == store.MailUpdate {
			h.InReplyTo = f.MessageID()
		}
		b.msg, b.err = report.FindingEmail(f, h, noteOf(first))
		out = append(out, *b)
	}
	for i, rcpt := range digestOrder {
		b := digests[rcpt]
		b.id = fmt.Sprintf("<perfbot.digest.%d.%d@perfbot.invalid>", now.UnixNano(), i)
		var entries []report.DigestEntry
		for _, m := range b.rows {
			entries = append(entries, report.DigestEntry{Finding: fs[m.Culprit], Update: noteOf(m)})
		}
		h := report.MailHeader{From: from, To: addresses(cfg, fs[b.rows[0].Culprit], b.to), MessageID: b.id, Date: now}
		b.msg, b.err = report.DigestEmail(h, entries, reportDir)
		out = append(out, *b)
	}
	return out
}

// addresses are the header addresses of outbox recipients: with the
// author's name for the author.
func addresses(cfg *SMTPConfig, f *finding.Finding, keys []string) []netmail.Address {
	rs := recipients(cfg, f)
	out := make([]netmail.Address, len(keys))
	for i, k := range keys {
		out[i] = netmail.Address{Address: k}
		if j := slices.IndexFunc(rs, func(r recipient) bool { return r.key == k }); j >= 0 {
			out[i] = rs[j].addr
		}
	}
	return out
}

func noteOf(m store.Mail) string {
	var s mailSummary
	_ = json.Unmarshal([]byte(m.Summary), &s)
	return s.Note
}

// recordBatch records each row of b after the server's answer.
func recordBatch(ctx context.Context, st *store.Store, b batch, res notify.Result, err error, now time.Time, logf func(string, ...any)) error {
	// What the server answered is recorded even when ctx just ended (a
	// SIGTERM during the send): only a kill or a crash leaves a sent
	// message unrecorded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var refused *notify.RefusedError
	sentTo := map[string][]string{}
	for _, m := range b.rows {
		m.Attempts++
		switch {
		case err == nil && slices.Contains(res.Accepted, m.Recipient):
			m.Status, m.Error, m.SentAs = store.MailSent, "", b.id
			sentTo[m.Culprit] = append(sentTo[m.Culprit], m.Recipient)
		case res.Refused[m.Recipient] != nil:
			m.Status, m.Error = store.MailRefused, res.Refused[m.Recipient].Error()
		case errors.As(err, &refused) || (err != nil && err == b.err):
			m.Status, m.Error = store.MailRefused, err.Error()
		default:
			why := res.Deferred[m.Recipient]
			if why == nil {
				why = err
			}
			m.Status, m.NextAttempt = store.MailFailed, now.Add(mailBackoff(m.Attempts))
			if why != nil {
				m.Error = why.Error()
			}
		}
		if m.Status != store.MailSent {
			logf("watch: mail %s of %s to %s: %s after %d attempts: %s", m.Kind, gitrev.Short(m.Culprit), m.Recipient, m.Status, m.Attempts, m.Error)
		}
		if err := st.RecordMail(ctx, m); err != nil {
			return err
		}
	}
	for culprit, to := range sentTo {
		logf("watch: mailed %s to %s", gitrev.Short(culprit), strings.Join(to, ", "))
		rec, err := st.Finding(ctx, culprit)
		if err != nil {
			return err
		}
		for _, r := range to {
			if !slices.Contains(rec.SentTo, r) {
				rec.SentTo = append(rec.SentTo, r)
			}
		}
		if err := st.MarkSent(ctx, culprit, (&finding.Finding{Culprit: culprit}).MessageID(), rec.SentTo); err != nil {
			return err
		}
	}
	return nil
}
