package watch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/notify"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// A server that is down: the mail fails, waits with a growing backoff,
// and goes out once, when the server is back.
func TestMailBackoffUntilServerUp(t *testing.T) {
	r := newMailRig(t, testutil.SMTPOptions{TLS: "implicit"})
	r.rc.SMTP.TLS = notify.ImplicitTLS
	r.srv.Stop()
	f := regression('d', "Dee <dee@example.org>")
	r.put(f)
	start := r.now
	r.cycle(30 * time.Second)
	ms := r.outbox(f.Culprit)
	if ms[0].Status != store.MailFailed || ms[0].Attempts != 1 || !ms[0].NextAttempt.Equal(start.Add(MailRetryFirst)) {
		t.Fatalf("after a failure: %+v; want failed once, next in %v", ms[0], MailRetryFirst)
	}
	r.cycle(30 * time.Second) // not due yet: no attempt
	if ms := r.outbox(f.Culprit); ms[0].Attempts != 1 {
		t.Errorf("attempted before its time: %+v", ms[0])
	}
	r.cycle(0) // due: fails again, waits twice as long
	if ms := r.outbox(f.Culprit); ms[0].Attempts != 2 || !ms[0].NextAttempt.Equal(r.now.Add(2*MailRetryFirst)) {
		t.Errorf("second failure: %+v; want next in %v", ms[0], 2*MailRetryFirst)
	}
	if err := r.srv.Start(); err != nil {
		t.Fatal(err)
	}
	r.cycle(time.Minute) // up, but not due
	if n := len(r.srv.Messages()); n != 0 {
		t.Errorf("sent before the backoff ended: %d", n)
	}
	r.cycle(time.Minute)
	r.cycle(time.Hour)
	if msgs := r.srv.Messages(); len(msgs) != 1 || len(msgs[0].To) != 2 || !msgs[0].TLS {
		t.Fatalf("after the server came back: %+v; want one message to both, over TLS", msgs)
	}
	if ms := r.outbox(f.Culprit); ms[0].Status != store.MailSent || ms[0].Attempts != 3 {
		t.Errorf("outbox %+v", ms)
	}
	for n, want := range map[int]time.Duration{1: time.Minute, 3: 4 * time.Minute, 8: 128 * time.Minute, 9: MailRetryMax, 30: MailRetryMax} {
		if got := mailBackoff(n); got != want {
			t.Errorf("backoff after %d failures = %v, want %v", n, got, want)
		}
	}
}

// A recipient refused for good (550) is recorded and never tried again;
// one refused for now (450) is tried again later.
func TestMailRecipientRefused(t *testing.T) {
	r := newMailRig(t, testutil.SMTPOptions{Refuse: map[string]int{"gone@example.org": 550, "full@example.org": 450}})
	r.rc.SMTP.To = []string{"full@example.org", "gone@example.org", "list@example.org"}
	f := regression('e', "")
	r.put(f)
	r.cycle(time.Hour)
	r.cycle(time.Hour)
	ms := r.outbox(f.Culprit)
	if len(ms) != 3 || ms[0].Status != store.MailFailed || ms[0].Attempts != 2 || ms[1].Status != store.MailRefused || ms[1].Attempts != 1 ||
		!strings.Contains(ms[1].Error, "550") || ms[2].Status != store.MailSent {
		t.Errorf("outbox %+v; want full@ failed twice, gone@ refused once (550), list@ sent", ms)
	}
	if msgs := r.srv.Messages(); len(msgs) != 1 || strings.Join(msgs[0].To, ",") != "list@example.org" {
		t.Errorf("messages %+v", msgs)
	}
	// Taken out of the watch file, full@ is tried no more.
	r.rc.SMTP.To = []string{"list@example.org"}
	r.cycle(time.Hour)
	if ms := r.outbox(f.Culprit); ms[0].Status != store.MailSuperseded || ms[0].Attempts != 2 {
		t.Errorf("a recipient no longer configured: %+v", ms[0])
	}
}

// A watch stopped (its context cancelled, as by SIGTERM) while the server
// takes a mail still records it as sent: the next cycle, after a
// restart, sends nothing again.
func TestMailStoppedDuringSend(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r := newMailRig(t, testutil.SMTPOptions{OnData: func() {
		cancel()
		time.Sleep(100 * time.Millisecond)
	}})
	f := regression('m', "")
	r.put(f)
	if err := MailFindings(ctx, r.rc, r.st, "regressions", r.now, r.logf); err != nil {
		t.Fatal(err)
	}
	if ms := r.outbox(f.Culprit); len(ms) != 1 || ms[0].Status != store.MailSent {
		t.Fatalf("outbox after a stop during the send: %+v; want sent", ms)
	}
	r.cycle(time.Hour)
	if n := len(r.srv.Messages()); n != 1 {
		t.Errorf("%d messages, want 1", n)
	}
}
