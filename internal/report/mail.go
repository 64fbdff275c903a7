package report

import (
	"bytes"
	"fmt"
	"mime"
	"net/mail"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
)

// MailHeader is the header of one of perfbot's mails. Display names and
// the subject are RFC 2047 encoded when they are not plain ASCII.
type MailHeader struct {
	From      mail.Address
	To        []mail.Address
	Subject   string
	MessageID string // "<...>"
	// InReplyTo is the Message-ID of the first mail of the thread, for a
	// mail that follows it (In-Reply-To and References).
	InReplyTo string
	Date      time.Time
}

// CheckHeaderText refuses a value that must not reach a mail header: not
// valid UTF-8, or holding a control character (CR and LF among them,
// which would start a header of their own).
func CheckHeaderText(field, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not valid UTF-8", field, s)
	}
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		return fmt.Errorf("%s %q holds the control character %U", field, s, []rune(s[i:])[0])
	}
	return nil
}

// cleanHeaderText is s with each control character (and each invalid
// byte) as a space: a subject from commit data, which is shown, not
// refused.
func cleanHeaderText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, " "))
}

// write writes the header, or refuses it when an address, a name or an
// identifier holds what CheckHeaderText refuses.
func (h *MailHeader) write(b *bytes.Buffer) error {
	addrs := append([]mail.Address{h.From}, h.To...)
	for _, a := range addrs {
		if err := CheckHeaderText("address", a.Address); err != nil {
			return err
		}
		if err := CheckHeaderText("name", a.Name); err != nil {
			return err
		}
	}
	for _, id := range []string{h.MessageID, h.InReplyTo} {
		if err := CheckHeaderText("Message-ID", id); err != nil {
			return err
		}
	}
	to := make([]string, len(h.To))
	for i, a := range h.To {
		to[i] = a.String()
	}
	fmt.Fprintf(b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: %s\r\nDate: %s\r\n", h.From.String(), strings.Join(to, ", "),
		mime.QEncoding.Encode("utf-8", cleanHeaderText(h.Subject)), h.MessageID, h.Date.Format(time.RFC1123Z))
	if h.InReplyTo != "" {
		fmt.Fprintf(b, "In-Reply-To: %s\r\nReferences: %s\r\n", h.InReplyTo, h.InReplyTo)
	}
	b.WriteString("Auto-Submitted: auto-generated\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	return nil
}

// Email is a whole message (RFC 5322) of header h and a text body, with
// CRLF line ends, ready for SMTP.
func Email(h MailHeader, body string) ([]byte, error) {
	var b bytes.Buffer
	if err := h.write(&b); err != nil {
		return nil, err
	}
	body = strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n")
	b.WriteString(strings.ReplaceAll(body, "\n", "\r\n"))
	return b.Bytes(), nil
}

// FindingEmail is a finding's mail: the first of its thread, or, when
// h.InReplyTo is set, an update that says first what changed (update).
// The subject is the finding's.
func FindingEmail(f *finding.Finding, h MailHeader, update string) ([]byte, error) {
	var body strings.Builder
	h.Subject = FindingSubject(f)
	if h.InReplyTo != "" {
		h.Subject = "Re: " + h.Subject
	}
	if update != "" {
		fmt.Fprintf(&body, "Update: %s\n\n", update)
	}
	_ = WriteFindingText(&body, f)
	return Email(h, body.String())
}

// DigestEntry is one finding's mail that a digest carries instead.
type DigestEntry struct {
	Finding *finding.Finding
	Update  string // what changed, for an update; "" for a first mail
}

// DigestEmail is one mail that stands for many: a line per finding's
// mail, with the finding's subject and what changed, and the report
// folder where each is written out in full.
func DigestEmail(h MailHeader, entries []DigestEntry, reportDir string) ([]byte, error) {
	h.Subject = fmt.Sprintf("perfbot: %d findings and updates", len(entries))
	var b strings.Builder
	fmt.Fprintf(&b, "Greeting,\n\nperfbot has %d mails for you from one cycle; instead of as many mails, here they are in one:\n\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "  %s\n", cleanHeaderText(FindingSubject(e.Finding)))
		fmt.Fprintf(&b, "      commit %s %s, verdict %s\n", gitrev.Short(e.Finding.Culprit), e.Finding.Subject, e.Finding.Verdict)
		if e.Update != "" {
			fmt.Fprintf(&b, "      update: %s\n", e.Update)
		}
	}
	if reportDir != "" {
		fmt.Fprintf(&b, "\nEach finding is written out in full in %s (<commit>.txt, .md, .json).\n", reportDir)
	}
	b.WriteString("\n-- \nperfbot\n")
	return Email(h, b.String())
}
