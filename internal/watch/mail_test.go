package watch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	netmail "net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// mailRig is a store of findings and a real SMTP server with STARTTLS and
// AUTH on loopback, mailed through a report config as a watch file gives
// it.
type mailRig struct {
	t    *testing.T
	srv  *testutil.SMTPServer
	rc   *ReportConfig
	st   *store.Store
	now  time.Time
	mu   sync.Mutex
	logs []string
}

func newMailRig(t *testing.T, opts testutil.SMTPOptions) *mailRig {
	if opts.TLS == "" {
		opts.TLS = "starttls"
	}
	opts.Users = map[string]string{"perfbot": "pw-123"}
	srv := testutil.StartSMTPServer(t, opts)
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("pw-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rc := &ReportConfig{Dir: "/reports", SMTP: &SMTPConfig{Addr: srv.Addr, CAFile: srv.CA.File, Username: "perfbot", PasswordFile: pw,
		From: "perfbot@example.org", To: []string{"list@example.org"}, Author: true, Digest: DefaultDigest}}
	return &mailRig{t: t, srv: srv, rc: rc, st: st, now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
}

func (r *mailRig) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
	r.t.Logf(format, args...)
}

// cycle mails at the rig's time, then moves the time on by after.
func (r *mailRig) cycle(after time.Duration) {
	r.t.Helper()
	if err := MailFindings(r.t.Context(), r.rc, r.st, "regressions", r.now, r.logf); err != nil {
		r.t.Fatal(err)
	}
	r.now = r.now.Add(after)
}

func (r *mailRig) put(f *finding.Finding) {
	r.t.Helper()
	data, _ := json.Marshal(f)
	if _, err := r.st.PutFinding(r.t.Context(), f.Culprit, data); err != nil {
		r.t.Fatal(err)
	}
}

func (r *mailRig) outbox(culprit string) []store.Mail {
	ms, err := r.st.Mails(r.t.Context(), culprit)
	if err != nil {
		r.t.Fatal(err)
	}
	return ms
}

var mailFound = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)

func regression(culprit byte, author string) *finding.Finding {
	hash := strings.Repeat(string(culprit), 40)
	return &finding.Finding{Culprit: hash, Subject: "sched: raccourcir la file d'attente", Author: author, Branch: "main", Job: "bench",
		Metric: "work_ms", Change: 40, Verdict: "real-regression", Sentence: "A real regression.", Found: mailFound,
		Metrics: []finding.MetricChange{{Job: "bench", Metric: "work_ms", Change: 40, Verdict: "real-regression"}}}
}

// parsed is a received message's header and body.
func parsed(t *testing.T, m testutil.SMTPMessage) (netmail.Header, string) {
	t.Helper()
	msg, err := netmail.ReadMessage(strings.NewReader(m.Data))
	if err != nil {
		t.Fatalf("%v:\n%s", err, m.Data)
	}
	var body bytes.Buffer
	body.ReadFrom(msg.Body)
	return msg.Header, body.String()
}

func subject(t *testing.T, h netmail.Header) string {
	var dec mime.WordDecoder
	s, err := dec.DecodeHeader(h.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A finding's first mail, then one update per change of what it says
// (verdict, a new metric, withdrawal, a later commit that recovers it),
// each threaded to the first; a cycle that finds nothing new sends
// nothing.
func TestMailThreadOfUpdates(t *testing.T) {
	r := newMailRig(t, testutil.SMTPOptions{})
	f := regression('a', "Zoë Ünal <zoe@example.org>")
	r.put(f)
	r.cycle(time.Minute)
	r.cycle(time.Minute) // at most once: the same finding again
	msgs := r.srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages after two cycles, want 1", len(msgs))
	}
	h, body := parsed(t, msgs[0])
	root := f.MessageID()
	to, err := h.AddressList("To")
	if err != nil || len(to) != 2 || to[0].Address != "list@example.org" || to[1].Name != "Zoë Ünal" || to[1].Address != "zoe@example.org" {
		t.Errorf("To = %v, %v", to, err)
	}
	if !msgs[0].TLS || msgs[0].User != "perfbot" || h.Get("Message-ID") != root || h.Get("In-Reply-To") != "" ||
		!strings.HasPrefix(subject(t, h), "[main] aaaaaaaaaaaa: work_ms +40.0% regression") || !strings.Contains(body, "raccourcir") {
		t.Errorf("first mail (TLS %v, user %q):\n%s", msgs[0].TLS, msgs[0].User, msgs[0].Data)
	}

	steps := []struct {
		change func()
		want   string
	}{
		{func() { f.Verdict, f.Metrics[0].Verdict = "text-alignment", "text-alignment"; r.put(f) }, "the verdict is now text-alignment (it was real-regression)"},
		{func() {
			f.Metrics = append(f.Metrics, finding.MetricChange{Job: "bench", Metric: "cycles", Change: 12, Verdict: "real-regression"})
			r.put(f)
		}, "it also moves bench cycles by +12.0% (real-regression)"},
		{func() {
			fix := regression('b', "Fixer <fix@example.org>")
			fix.Change, fix.Verdict, fix.Found = -30, "real-improvement", mailFound.Add(time.Hour)
			fix.Metrics[0].Change, fix.Metrics[0].Verdict = -30, "real-improvement"
			r.put(fix)
		}, "recovered: the later commit bbbbbbbbbbbb"},
		{func() {
			if err := r.st.WithdrawFinding(t.Context(), f.Culprit); err != nil {
				t.Fatal(err)
			}
		}, "withdrawn: the commit is no longer on the watched branches"},
	}
	for i, step := range steps {
		step.change()
		r.cycle(time.Minute)
		r.cycle(time.Minute)
		msgs := r.srv.Messages()
		if len(msgs) != i+2 {
			t.Fatalf("step %d: %d messages, want %d (one update, once)", i, len(msgs), i+2)
		}
		h, body := parsed(t, msgs[i+1])
		id := fmt.Sprintf("<perfbot.%s.%d@perfbot.invalid>", f.Culprit, i+2)
		if h.Get("Message-ID") != id || h.Get("In-Reply-To") != root || h.Get("References") != root ||
			!strings.HasPrefix(subject(t, h), "Re: [main] aaaaaaaaaaaa") || !strings.HasPrefix(body, "Update: ") || !strings.Contains(body, step.want) {
			t.Errorf("update %d: want Message-ID %s in reply to %s saying %q:\n%s", i, id, root, step.want, msgs[i+1].Data)
		}
	}
	ms := r.outbox(f.Culprit)
	if len(ms) != 10 || ms[9].Revision != 5 || ms[9].Status != store.MailSent || ms[9].Kind != store.MailUpdate {
		t.Errorf("outbox %+v; want 5 revisions to 2 recipients, all sent", ms)
	}
	if rec, _ := r.st.Finding(t.Context(), f.Culprit); rec.MessageID != root || len(rec.SentTo) != 2 {
		t.Errorf("finding's mail record: %q %v", rec.MessageID, rec.SentTo)
	}
	// A dismissed finding is mailed no more.
	if err := r.st.SetFindingState(t.Context(), f.Culprit, store.Dismissed, "known"); err != nil {
		t.Fatal(err)
	}
	f.Verdict = "real-regression"
	r.put(f)
	r.cycle(time.Minute)
	if n := len(r.srv.Messages()); n != 5 {
		t.Errorf("%d messages after dismissing, want still 5", n)
	}
}

// An author address or name with a CR, an LF or another control
// character is refused and noted (outbox and log); the list still gets
// the mail, and no header gains a line of its own.
func TestMailRefusesControlCharactersFromCommits(t *testing.T) {
	for _, author := range []string{"Eve <eve@example.org\r\nBcc: all@example.org>", "Eve\rBcc: all@example.org <eve@example.org>", "Eve <eve\x7f@example.org>"} {
		r := newMailRig(t, testutil.SMTPOptions{})
		f := regression('c', author)
		r.put(f)
		r.cycle(time.Minute)
		msgs := r.srv.Messages()
		if len(msgs) != 1 || strings.Join(msgs[0].To, ",") != "list@example.org" {
			t.Fatalf("author %q: messages %+v; want one, to the list only", author, msgs)
		}
		h, _ := parsed(t, msgs[0])
		if h.Get("Bcc") != "" || strings.Contains(h.Get("To"), "eve") {
			t.Errorf("author %q reached the header: %v", author, h)
		}
		ms := r.outbox(f.Culprit)
		if len(ms) != 2 || ms[0].Status != store.MailRefused || !strings.Contains(ms[0].Error, "control character") {
			t.Errorf("author %q: outbox %+v; want the author refused for a control character", author, ms)
		}
		if !strings.Contains(strings.Join(r.logs, "\n"), "not mailing") {
			t.Errorf("author %q: the refusal is not logged: %q", author, r.logs)
		}
		r.cycle(time.Hour)
		if n := len(r.srv.Messages()); n != 1 {
			t.Errorf("author %q: %d messages after another cycle, want 1", author, n)
		}
	}
}

// More mails than report.smtp.digest for one recipient in one cycle go
// as one digest, each mail recorded as sent in it; the next cycle sends
// nothing.
func TestMailDigest(t *testing.T) {
	r := newMailRig(t, testutil.SMTPOptions{})
	r.rc.SMTP.Digest = 2
	for _, c := range []byte("fgh") {
		r.put(regression(c, "Auth "+string(c)+" <"+string(c)+"@example.org>"))
	}
	r.cycle(time.Minute)
	r.cycle(time.Minute)
	msgs := r.srv.Messages()
	// The list has three mails: a digest; each author has one: its own.
	var digest []testutil.SMTPMessage
	for _, m := range msgs {
		if strings.Contains(m.Data, "findings and updates") {
			digest = append(digest, m)
		}
	}
	if len(msgs) != 4 || len(digest) != 1 || strings.Join(digest[0].To, ",") != "list@example.org" {
		t.Fatalf("%d messages (%d digests); want a digest to the list and one mail to each author", len(msgs), len(digest))
	}
	h, body := parsed(t, digest[0])
	if subject(t, h) != "perfbot: 3 findings and updates" || !strings.Contains(body, "ffffffffffff") || !strings.Contains(body, "hhhhhhhhhhhh") {
		t.Errorf("digest:\n%s", digest[0].Data)
	}
	for _, c := range []byte("fgh") {
		ms := r.outbox(strings.Repeat(string(c), 40))
		if ms[1].Recipient != "list@example.org" || ms[1].Status != store.MailSent || ms[1].SentAs != h.Get("Message-ID") {
			t.Errorf("outbox of %c: %+v; want sent in the digest %s", c, ms, h.Get("Message-ID"))
		}
	}
}

// Notify sends a plain notice through the report config; a certificate
// the configured CA did not sign fails it.
func TestNotify(t *testing.T) {
	r := newMailRig(t, testutil.SMTPOptions{})
	if _, err := r.rc.Notify(t.Context(), "perfbot watch: 3 cycles failed", "the last error: disk full\n"); err != nil {
		t.Fatal(err)
	}
	msgs := r.srv.Messages()
	if len(msgs) != 1 || !msgs[0].TLS || strings.Join(msgs[0].To, ",") != "list@example.org" || !strings.Contains(msgs[0].Data, "disk full") {
		t.Fatalf("messages %+v", msgs)
	}
	r.rc.SMTP.CAFile = testutil.NewTestCA(t).File
	if _, err := r.rc.Notify(t.Context(), "x", "y"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a foreign CA: %v", err)
	}
}

// A finding mailed by a perfbot from before the outbox (the findings
// table lists its recipients) is not mailed to them again: only a
// recipient it did not reach gets the first mail, and updates follow.
func TestMailAfterUpgrade(t *testing.T) {
	r := newMailRig(t, testutil.SMTPOptions{})
	f := regression('k', "Kay <kay@example.org>")
	r.put(f)
	if err := r.st.MarkSent(t.Context(), f.Culprit, f.MessageID(), []string{"list@example.org"}); err != nil {
		t.Fatal(err)
	}
	r.cycle(time.Minute)
	msgs := r.srv.Messages()
	if len(msgs) != 1 || strings.Join(msgs[0].To, ",") != "kay@example.org" {
		t.Fatalf("after the upgrade: %+v; want one mail, to the author only", msgs)
	}
	f.Verdict = "data-alignment"
	r.put(f)
	r.cycle(time.Minute)
	if msgs := r.srv.Messages(); len(msgs) != 2 || len(msgs[1].To) != 2 || !strings.Contains(msgs[1].Data, "In-Reply-To: "+f.MessageID()) {
		t.Errorf("the update: %+v", msgs[len(msgs)-1])
	}
}
