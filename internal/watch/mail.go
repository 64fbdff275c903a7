package watch

import (
	"context"
	"encoding/json"
	"fmt"
	netmail "net/mail"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
)

// A finding's mails. Each finding has a thread: a first mail, and an
// update whenever what the finding says changes (its verdict, a metric
// it gains or whose verdict changes, its withdrawal, a later commit that
// recovers it). Each of those revisions is an outbox row per recipient
// in the store (store.Mail), so each goes out at most once per recipient
// (see deliverMail for the one window where it can go twice).

// messageID is the Message-ID of a revision: the finding's own for its
// first mail, which every update refers to.
func messageID(f *finding.Finding, rev int, kind store.MailKind) string {
	if kind == store.MailFirst {
		return f.MessageID()
	}
	return fmt.Sprintf("<perfbot.%s.%d@perfbot.invalid>", f.Culprit, rev)
}

// recipient is one address a finding's mail goes to, with its outbox key
// and why it is refused, if it is.
type recipient struct {
	addr netmail.Address
	key  string
	err  error
}

// recipients are the configured ones and, with author: true, the
// culprit's author, whose name and address come from commit data: one
// that a header cannot hold is refused, not mailed.
func recipients(cfg *SMTPConfig, f *finding.Finding) []recipient {
	var out []recipient
	for _, to := range cfg.To {
		out = append(out, recipient{addr: netmail.Address{Address: to}, key: to})
	}
	if !cfg.Author {
		return out
	}
	i, j := strings.IndexByte(f.Author, '<'), strings.LastIndexByte(f.Author, '>')
	if i < 0 || j < i {
		return out
	}
	name, addr := strings.TrimSpace(f.Author[:i]), f.Author[i+1:j]
	if slices.Contains(cfg.To, addr) {
		return out
	}
	r := recipient{addr: netmail.Address{Name: name, Address: addr}, key: addr}
	if err := report.CheckHeaderText("author name", name); err != nil {
		r.err = err
	} else if err := CheckAddress(addr); err != nil {
		r.err = fmt.Errorf("author address: %w", err)
	}
	if r.err != nil {
		r.key = strconv.QuoteToASCII(addr)
	}
	return append(out, r)
}

// planMail puts into the outbox the mails that the store's findings call
// for now: a first mail for a finding the policy reports, an update for a
// mailed finding whose summary changed (superseding what of the older
// revisions did not go out), and rows for recipients added since. A
// dismissed finding is mailed no more.
func planMail(ctx context.Context, cfg *SMTPConfig, st *store.Store, policy string, now time.Time, logf func(string, ...any)) error {
	recs, err := st.Findings(ctx)
	if err != nil {
		return err
	}
	all := make([]*finding.Finding, len(recs))
	for i, r := range recs {
		all[i], _ = finding.Decode(r.Data)
	}
	all = slices.DeleteFunc(slices.Clone(all), func(f *finding.Finding) bool { return f == nil })
	for i := range recs {
		rec := &recs[i]
		f, err := finding.Decode(rec.Data)
		if err != nil {
			logf("watch: finding %s: %v", gitrev.Short(rec.Culprit), err)
			continue
		}
		if err := planFinding(ctx, cfg, st, policy, now, logf, rec, f, all); err != nil {
			return err
		}
	}
	return nil
}

func planFinding(ctx context.Context, cfg *SMTPConfig, st *store.Store, policy string, now time.Time, logf func(string, ...any),
	rec *store.FindingRecord, f *finding.Finding, all []*finding.Finding) error {
	ms, err := st.Mails(ctx, rec.Culprit)
	if err != nil {
		return err
	}
	latest, sent := 0, false
	var last store.Mail
	for _, m := range ms {
		if m.Revision > latest {
			latest, last = m.Revision, m
		}
		sent = sent || m.Status == store.MailSent
	}
	if rec.State == store.Dismissed {
		_, err := st.SupersedeMail(ctx, rec.Culprit, latest+1)
		return err
	}
	sum := summarize(f, rec, all)
	if latest == 0 && len(rec.SentTo) > 0 {
		// Mailed by a perfbot from before the outbox: its first mail
		// went to these recipients, as it says now.
		if err := seedOutbox(ctx, st, rec, f, sum, now); err != nil {
			return err
		}
		if ms, err = st.Mails(ctx, rec.Culprit); err != nil {
			return err
		}
		latest, last, sent = 1, ms[0], true
	}
	var prev mailSummary
	if latest > 0 {
		if err := json.Unmarshal([]byte(last.Summary), &prev); err != nil {
			return fmt.Errorf("mail of %s: summary: %w", gitrev.Short(rec.Culprit), err)
		}
	}
	rs := recipients(cfg, f)
	var lost []recipient // those no live row tells what the latest revision says
	if latest > 0 && prev.same(sum) {
		lost = untold(ms, rs)
	}
	rev, kind := latest, last.Kind
	switch {
	case latest > 0 && prev.same(sum) && !slices.ContainsFunc(lost, func(r recipient) bool { return hasRow(ms, latest, r.key) }):
		// Nothing new, but for recipients added since.
		sum, rs = prev, lost
	case !sent && (rec.Withdrawn || !f.Reported(policy)):
		// Never mailed, and nothing to mail now.
		_, err := st.SupersedeMail(ctx, rec.Culprit, latest+1)
		return err
	case latest > 0 && prev.same(sum):
		// The latest revision's mail to these recipients was superseded
		// before it went out (the finding was dismissed, withdrawn or not
		// reported, and qualifies again): it goes out to them, once, as a
		// new revision saying the same.
		rev, kind, sum, rs = latest+1, last.Kind, prev, lost
	default:
		rev, kind = latest+1, store.MailFirst
		if sent {
			kind, sum.Note = store.MailUpdate, changeNote(prev, sum, f)
		}
		if _, err := st.SupersedeMail(ctx, rec.Culprit, rev); err != nil {
			return err
		}
	}
	data, _ := json.Marshal(sum)
	id := messageID(f, rev, kind)
	for _, r := range rs {
		m := store.Mail{Culprit: rec.Culprit, Revision: rev, Recipient: r.key, Kind: kind, MessageID: id, Summary: string(data),
			Status: store.MailPending, NextAttempt: now}
		if r.err != nil {
			m.Status, m.Error = store.MailRefused, r.err.Error()
		}
		added, err := st.AddMail(ctx, []store.Mail{m})
		if err != nil {
			return err
		}
		if added > 0 && r.err != nil {
			logf("watch: finding %s: not mailing %s: %v", gitrev.Short(rec.Culprit), r.key, r.err)
		}
	}
	return nil
}

// untold are the recipients of rs that no live row (pending, failed,
// sent or refused) tells what the latest revision says: none in that
// revision or the ones before it that say the same (a revision that
// resends a superseded mail holds only the rows of those it resends to).
// They are the recipients added since, and those whose mail of it was
// superseded before it went out.
func untold(ms []store.Mail, rs []recipient) []recipient {
	sums := map[int]mailSummary{}
	latest := 0
	for _, m := range ms {
		if _, ok := sums[m.Revision]; !ok {
			var s mailSummary
			_ = json.Unmarshal([]byte(m.Summary), &s)
			sums[m.Revision] = s
		}
		latest = max(latest, m.Revision)
	}
	base := latest // the first of the revisions that say what the latest does
	for base > 1 {
		s, ok := sums[base-1]
		if ok && !s.same(sums[latest]) {
			break
		}
		base--
	}
	var out []recipient
	for _, r := range rs {
		if !slices.ContainsFunc(ms, func(m store.Mail) bool {
			return m.Recipient == r.key && m.Revision >= base && m.Status != store.MailSuperseded
		}) {
			out = append(out, r)
		}
	}
	return out
}

// hasRow says whether the outbox holds a row of revision rev to key.
func hasRow(ms []store.Mail, rev int, key string) bool {
	return slices.ContainsFunc(ms, func(m store.Mail) bool { return m.Revision == rev && m.Recipient == key })
}

// seedOutbox records the first mail of a finding that the findings table
// says was sent before the store had an outbox, so that an upgrade mails
// nobody twice.
func seedOutbox(ctx context.Context, st *store.Store, rec *store.FindingRecord, f *finding.Finding, sum mailSummary, now time.Time) error {
	sum.Note = ""
	data, _ := json.Marshal(sum)
	var ms []store.Mail
	for _, to := range rec.SentTo {
		ms = append(ms, store.Mail{Culprit: rec.Culprit, Revision: 1, Recipient: to, Kind: store.MailFirst, MessageID: f.MessageID(),
			Summary: string(data), Status: store.MailSent, Attempts: 1, NextAttempt: now, SentAs: rec.MessageID})
	}
	_, err := st.AddMail(ctx, ms)
	return err
}
