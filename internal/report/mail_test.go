package report

import (
	"bytes"
	"mime"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/finding"
)

func mailFinding() *finding.Finding {
	return &finding.Finding{Culprit: "0123456789abcdef0123456789abcdef01234567", Subject: "sched: réduire la latence", Author: "Zoë <z@x>",
		Branch: "main-ü", Job: "bench", Metric: "work_ms", Change: 12.5, Verdict: "real-regression", Sentence: "It is real."}
}

// The subject and the display names go out RFC 2047 encoded and come
// back as they were; the header parses; threading fields name the first
// mail.
func TestFindingEmailRoundTrip(t *testing.T) {
	f := mailFinding()
	h := MailHeader{From: mail.Address{Name: "perfbot", Address: "bot@x"}, To: []mail.Address{{Name: "Zoë Ünal", Address: "z@x"}, {Address: "list@x"}},
		MessageID: "<perfbot.1@x>", InReplyTo: "<perfbot.0@x>", Date: time.Unix(0, 0)}
	data, err := FindingEmail(f, h, "the verdict is now text-alignment")
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := bytes.Cut(data, []byte("\r\n\r\n"))
	for _, c := range head {
		if c >= 0x80 {
			t.Fatalf("the header has a non-ASCII byte:\n%s", head)
		}
	}
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var dec mime.WordDecoder
	subj, err := dec.DecodeHeader(m.Header.Get("Subject"))
	if want := "Re: " + FindingSubject(f); err != nil || subj != want {
		t.Errorf("Subject decodes to %q, %v; want %q", subj, err, want)
	}
	to, err := m.Header.AddressList("To")
	if err != nil || len(to) != 2 || to[0].Name != "Zoë Ünal" || to[0].Address != "z@x" || to[1].Address != "list@x" {
		t.Errorf("To = %v, %v", to, err)
	}
	if m.Header.Get("In-Reply-To") != "<perfbot.0@x>" || m.Header.Get("References") != "<perfbot.0@x>" || m.Header.Get("Message-ID") != "<perfbot.1@x>" {
		t.Errorf("threading header: %v", m.Header)
	}
	var body bytes.Buffer
	body.ReadFrom(m.Body)
	if !strings.HasPrefix(body.String(), "Update: the verdict is now text-alignment\r\n") || !strings.Contains(body.String(), "sched: réduire") {
		t.Errorf("body:\n%s", body.String())
	}
	// A first mail has no threading fields and no "Re:".
	h.InReplyTo = ""
	data, _ = FindingEmail(f, h, "")
	if m, _ := mail.ReadMessage(bytes.NewReader(data)); m.Header.Get("In-Reply-To") != "" || strings.HasPrefix(m.Header.Get("Subject"), "Re:") {
		t.Errorf("first mail header: %v", m.Header)
	}
}

// A CR or LF from commit data never starts a header of its own: in an
// address or a name the mail is refused; in a subject it is a space.
func TestEmailRefusesControlCharacters(t *testing.T) {
	base := MailHeader{From: mail.Address{Address: "bot@x"}, To: []mail.Address{{Address: "a@x"}}, MessageID: "<m@x>"}
	for _, to := range []mail.Address{{Address: "evil@x\r\nBcc: all@x"}, {Name: "Eve\rBcc: all@x", Address: "e@x"}, {Address: "a@x\x00"}, {Name: "x\u0085y", Address: "a@x"}} {
		h := base
		h.To = []mail.Address{to}
		if _, err := Email(h, "body"); err == nil || !strings.Contains(err.Error(), "control character") && !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("To %q: %v; want a refusal", to, err)
		}
	}
	h := base
	h.Subject = "fix\r\nBcc: all@x"
	data, err := Email(h, "line one\nline two\r\n")
	if err != nil {
		t.Fatal(err)
	}
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil || m.Header.Get("Bcc") != "" || m.Header.Get("Subject") != "fix  Bcc: all@x" {
		t.Errorf("a subject with CR LF: %v %v", m.Header, err)
	}
	if !bytes.HasSuffix(data, []byte("\r\n\r\nline one\r\nline two\r\n")) {
		t.Errorf("body line ends: %q", data)
	}
}
