package watch

import (
	"context"
	"fmt"
	netmail "net/mail"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/notify"
	"github.com/perfbot/perfbot/internal/report"
)

// Notify mails subject and body to the report's recipients
// (report.smtp.to, not the authors) through its mail server, as the
// findings' mails go: perfbot's one way to tell of something that is not
// a finding (a watch whose cycles keep failing). It is not kept in the
// outbox: the caller decides whether and when to tell again. It returns
// the recipients that accepted the message, and an error unless every one
// did; without report.smtp or recipients it does nothing.
func (rc *ReportConfig) Notify(ctx context.Context, subject, body string) (accepted []string, err error) {
	cfg := rc.SMTP
	if cfg == nil || len(cfg.To) == 0 {
		return nil, nil
	}
	srv, err := cfg.Server()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	h := report.MailHeader{From: netmail.Address{Address: cfg.From}, Subject: subject,
		MessageID: fmt.Sprintf("<perfbot.notice.%d@perfbot.invalid>", now.UnixNano()), Date: now}
	for _, to := range cfg.To {
		h.To = append(h.To, netmail.Address{Address: to})
	}
	msg, err := report.Email(h, body)
	if err != nil {
		return nil, err
	}
	res, err := notify.Send(ctx, srv, cfg.From, cfg.To, msg)
	if err != nil {
		return res.Accepted, err
	}
	var missed []string
	for _, m := range []map[string]error{res.Refused, res.Deferred} {
		for to, err := range m {
			missed = append(missed, fmt.Sprintf("%s (%v)", to, err))
		}
	}
	if len(missed) > 0 {
		return res.Accepted, fmt.Errorf("mail server %s refused %s", cfg.Addr, strings.Join(missed, ", "))
	}
	return res.Accepted, nil
}
