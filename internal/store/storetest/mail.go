package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
)

// Outbox is the mail outbox's method set, as *store.Store implements it.
type Outbox interface {
	AddMail(ctx context.Context, ms []store.Mail) (int, error)
	Mails(ctx context.Context, culprit string) ([]store.Mail, error)
	DueMail(ctx context.Context, now time.Time) ([]store.Mail, error)
	RecordMail(ctx context.Context, m store.Mail) error
	SupersedeMail(ctx context.Context, culprit string, revision int) (int, error)
}

var _ Outbox = (*store.Store)(nil)

// testMailOutbox: a mail is one row per (culprit, revision, recipient),
// added once; due mail is the pending and failed rows whose time has come;
// a sent row is never made due again; a newer revision supersedes the
// older rows that did not go out.
func testMailOutbox(t *testing.T, s Store) {
	o, ok := s.(Outbox)
	if !ok {
		t.Fatalf("%T has no mail outbox", s)
	}
	ctx := t.Context()
	first := store.Mail{Culprit: "c1", Revision: 1, Kind: store.MailFirst, MessageID: "<c1@p>", Summary: `{"verdict":"real-regression"}`,
		Status: store.MailPending, NextAttempt: when}
	a, b := first, first
	a.Recipient, b.Recipient = "a@x", "b@x"
	bad := first
	bad.Recipient, bad.Status, bad.Error = "c\r@x", store.MailRefused, "a control character in the address"
	if n, err := o.AddMail(ctx, []store.Mail{a, b, bad}); err != nil || n != 3 {
		t.Fatalf("AddMail = %d, %v; want 3", n, err)
	}
	a.Summary = "changed"
	if n, err := o.AddMail(ctx, []store.Mail{a}); err != nil || n != 0 {
		t.Errorf("adding a mail again = %d, %v; want 0 added", n, err)
	}
	ms, err := o.Mails(ctx, "c1")
	if err != nil || len(ms) != 3 || ms[0].Recipient != "a@x" || ms[0].Summary != first.Summary || !sameTime(ms[0].NextAttempt, when) ||
		ms[2].Recipient != "c\r@x" || ms[2].Status != store.MailRefused {
		t.Fatalf("Mails = %+v, %v", ms, err)
	}
	if due, err := o.DueMail(ctx, when.Add(-time.Second)); err != nil || len(due) != 0 {
		t.Errorf("DueMail before the time = %+v, %v", due, err)
	}
	due, err := o.DueMail(ctx, when)
	if err != nil || len(due) != 2 || due[0].Recipient != "a@x" || due[1].Recipient != "b@x" {
		t.Fatalf("DueMail = %+v, %v; want a@x and b@x", due, err)
	}
	sent := due[0]
	sent.Status, sent.Attempts, sent.SentAs = store.MailSent, 1, "<c1@p>"
	failed := due[1]
	failed.Status, failed.Attempts, failed.Error, failed.NextAttempt = store.MailFailed, 1, "421 try later", when.Add(time.Hour)
	for _, m := range []store.Mail{sent, failed} {
		if err := o.RecordMail(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if due, _ := o.DueMail(ctx, when.Add(time.Minute)); len(due) != 0 {
		t.Errorf("due a minute later: %+v; want none (b@x waits an hour)", due)
	}
	due, _ = o.DueMail(ctx, when.Add(time.Hour))
	if len(due) != 1 || due[0].Recipient != "b@x" || due[0].Attempts != 1 || due[0].Error != "421 try later" {
		t.Fatalf("due an hour later: %+v; want b@x after 1 attempt", due)
	}
	// A sent mail stays sent whatever is recorded later.
	sent.Status = store.MailFailed
	if err := o.RecordMail(ctx, sent); err != nil {
		t.Fatal(err)
	}
	if ms, _ := o.Mails(ctx, "c1"); ms[0].Status != store.MailSent || ms[0].SentAs != "<c1@p>" {
		t.Errorf("a sent mail recorded as failed became %+v", ms[0])
	}
	// Revision 2 supersedes b@x's unsent revision 1, not a@x's sent one.
	next := first
	next.Revision, next.Kind, next.Recipient = 2, store.MailUpdate, "b@x"
	if _, err := o.AddMail(ctx, []store.Mail{next}); err != nil {
		t.Fatal(err)
	}
	if n, err := o.SupersedeMail(ctx, "c1", 2); err != nil || n != 1 {
		t.Errorf("SupersedeMail = %d, %v; want 1", n, err)
	}
	ms, _ = o.Mails(ctx, "c1")
	if len(ms) != 4 || ms[0].Status != store.MailSent || ms[1].Status != store.MailSuperseded || ms[3].Revision != 2 || ms[3].Status != store.MailPending {
		t.Errorf("after revision 2: %+v", ms)
	}
	if ms, err := o.Mails(ctx, "other"); err != nil || len(ms) != 0 {
		t.Errorf("Mails of another culprit = %+v, %v", ms, err)
	}
	for _, m := range []store.Mail{
		{Culprit: "c", Revision: 1, Recipient: "r", Kind: store.MailFirst, Status: "lost"},
		{Culprit: "c", Revision: 0, Recipient: "r", Kind: store.MailFirst, Status: store.MailPending},
		{Culprit: "c", Revision: 1, Recipient: "r", Kind: "reply", Status: store.MailPending},
		{Culprit: "c", Revision: 1, Recipient: "r\x00", Kind: store.MailFirst, Status: store.MailPending},
	} {
		if _, err := o.AddMail(ctx, []store.Mail{m}); err == nil {
			t.Errorf("AddMail(%+v) took an invalid mail", m)
		}
	}
}
