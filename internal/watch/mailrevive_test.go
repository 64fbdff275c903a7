package watch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// A finding whose first mail is still waiting (the server is down) when
// it is dismissed, or withdrawn, and that qualifies again (set back to
// untriaged; back on a watched branch) is mailed once the server is up:
// once, as the first mail of its thread.
func TestMailAfterDismissedOrWithdrawnWhilePending(t *testing.T) {
	for _, c := range []struct {
		name          string
		culprit       byte
		drop, restore func(r *mailRig, culprit string)
	}{
		{"dismissed", 'p', func(r *mailRig, culprit string) {
			if err := r.st.SetFindingState(t.Context(), culprit, store.Dismissed, "noise"); err != nil {
				t.Fatal(err)
			}
		}, func(r *mailRig, culprit string) {
			if err := r.st.SetFindingState(t.Context(), culprit, store.Untriaged, ""); err != nil {
				t.Fatal(err)
			}
		}},
		{"withdrawn", 'q', func(r *mailRig, culprit string) {
			if err := r.st.WithdrawFinding(t.Context(), culprit); err != nil {
				t.Fatal(err)
			}
		}, func(r *mailRig, culprit string) {
			r.put(regression(culprit[0], "Pat <pat@example.org>")) // the branch push brings it back
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newMailRig(t, testutil.SMTPOptions{})
			r.srv.Stop()
			f := regression(c.culprit, "Pat <pat@example.org>")
			r.put(f)
			r.cycle(time.Hour) // the server is down: the first mail waits
			c.drop(r, f.Culprit)
			r.cycle(time.Hour)
			if ms := r.outbox(f.Culprit); len(ms) != 2 || ms[0].Status != store.MailSuperseded || ms[1].Status != store.MailSuperseded {
				t.Fatalf("outbox after the finding was %s: %+v; want both rows superseded", c.name, ms)
			}
			c.restore(r, f.Culprit)
			if err := r.srv.Start(); err != nil {
				t.Fatal(err)
			}
			r.cycle(time.Hour)
			r.cycle(time.Hour)
			r.cycle(time.Hour)
			msgs := r.srv.Messages()
			if len(msgs) != 1 || len(msgs[0].To) != 2 {
				t.Fatalf("%d messages (%+v); want the first mail once, to the list and the author", len(msgs), msgs)
			}
			h, _ := parsed(t, msgs[0])
			if h.Get("Message-ID") != f.MessageID() || h.Get("In-Reply-To") != "" {
				t.Errorf("want the thread's first mail %s:\n%s", f.MessageID(), msgs[0].Data)
			}
			ms := r.outbox(f.Culprit)
			if len(ms) != 4 || ms[3].Revision != 2 || ms[3].Kind != store.MailFirst || ms[3].Status != store.MailSent {
				t.Errorf("outbox %+v; want revision 2, a first mail, sent to both", ms)
			}
		})
	}
}

// An update still waiting when the finding is dismissed goes out, once,
// with its note and in its thread, when the finding is set back to
// untriaged.
func TestMailUpdateAfterDismissedWhilePending(t *testing.T) {
	r := newMailRig(t, testutil.SMTPOptions{})
	f := regression('s', "")
	r.put(f)
	r.cycle(time.Hour)
	r.srv.Stop()
	f.Verdict, f.Metrics[0].Verdict = "text-alignment", "text-alignment"
	r.put(f)
	r.cycle(time.Hour) // the update waits
	r.dismissReopen(f.Culprit)
	r.cycle(time.Hour)
	r.cycle(time.Hour)
	msgs := r.srv.Messages()
	if len(msgs) != 2 {
		t.Fatalf("%d messages; want the first mail and the update, once each", len(msgs))
	}
	h, body := parsed(t, msgs[1])
	id := fmt.Sprintf("<perfbot.%s.3@perfbot.invalid>", f.Culprit)
	if h.Get("Message-ID") != id || h.Get("In-Reply-To") != f.MessageID() ||
		!strings.Contains(body, "Update: the verdict is now text-alignment (it was real-regression)") {
		t.Errorf("want the update %s in reply to %s:\n%s", id, f.MessageID(), msgs[1].Data)
	}
}

// A recipient whose mail was superseded by a dismissal gets it when the
// finding is set back to untriaged; one that already had it does not get
// it again.
func TestMailAfterDismissedOnlyToThoseNotMailed(t *testing.T) {
	r := newMailRig(t, testutil.SMTPOptions{})
	r.rc.SMTP.Author = false
	f := regression('u', "Una <una@example.org>")
	r.put(f)
	r.cycle(time.Hour) // the list has it
	r.rc.SMTP.Author = true
	r.srv.Stop()
	r.cycle(time.Hour) // the author's waits
	r.dismissReopen(f.Culprit)
	r.cycle(time.Hour)
	r.cycle(time.Hour)
	r.cycle(time.Hour)
	msgs := r.srv.Messages()
	if len(msgs) != 2 || strings.Join(msgs[0].To, ",") != "list@example.org" || strings.Join(msgs[1].To, ",") != "una@example.org" {
		t.Fatalf("messages %+v; want one to the list, then one to the author", msgs)
	}
	if h, _ := parsed(t, msgs[1]); h.Get("Message-ID") != f.MessageID() {
		t.Errorf("the author's mail is not the thread's first:\n%s", msgs[1].Data)
	}
}

// dismissReopen dismisses the finding, runs a cycle, sets it back to
// untriaged and brings the mail server up again.
func (r *mailRig) dismissReopen(culprit string) {
	r.t.Helper()
	if err := r.st.SetFindingState(r.t.Context(), culprit, store.Dismissed, "noise"); err != nil {
		r.t.Fatal(err)
	}
	r.cycle(time.Hour)
	if err := r.st.SetFindingState(r.t.Context(), culprit, store.Untriaged, ""); err != nil {
		r.t.Fatal(err)
	}
	if err := r.srv.Start(); err != nil {
		r.t.Fatal(err)
	}
}
