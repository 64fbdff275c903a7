package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/notify"
)

// parseSMTP parses a watch file whose report.smtp is smtp (a YAML flow
// mapping), next to a job file.
func parseSMTP(t *testing.T, smtp string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "job.yaml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ca.pem", "pw"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return Parse(filepath.Join(dir, "watch.yaml"), []byte("jobs: [job.yaml]\nreport:\n  smtp: "+smtp+"\n"))
}

func TestSMTPConfig(t *testing.T) {
	c, err := parseSMTP(t, `{addr: "smtp.example.org:465", from: bot@example.org, to: [a@example.org], username: bot, password_file: pw, ca_file: ca.pem}`)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Report.SMTP
	dir := filepath.Dir(c.File)
	if s.TLS != notify.ImplicitTLS || s.PasswordFile != filepath.Join(dir, "pw") || s.CAFile != filepath.Join(dir, "ca.pem") || s.Digest != DefaultDigest {
		t.Errorf("parsed %+v", s)
	}
	c, err = parseSMTP(t, `{addr: "smtp.example.org:587", from: bot@example.org, to: a@example.org, username: bot, password_env: PERFBOT_SMTP_PASSWORD, digest: 0}`)
	if err != nil || c.Report.SMTP.TLS != notify.StartTLS || c.Report.SMTP.Digest != 0 {
		t.Errorf("port 587: %+v, %v", c.Report.SMTP, err)
	}
	if _, err := c.Report.SMTP.Server(); err == nil || !strings.Contains(err.Error(), "PERFBOT_SMTP_PASSWORD is not set") {
		t.Errorf("an unset password variable: %v", err)
	}
	t.Setenv("PERFBOT_SMTP_PASSWORD", "pw")
	if srv, err := c.Report.SMTP.Server(); err != nil || srv.Password != "pw" || srv.Username != "bot" {
		t.Errorf("Server() = %+v, %v", srv, err)
	}
	c, _ = parseSMTP(t, `{addr: "smtp.example.org:465", from: bot@example.org, to: [a@example.org], ca_file: ca.pem}`)
	if _, err := c.Report.SMTP.Server(); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a CA file without a certificate: %v", err)
	}
}

// Each problem of report.smtp is an error naming its field.
func TestSMTPConfigErrors(t *testing.T) {
	for smtp, want := range map[string]string{
		`{addr: smtp.example.org, from: b@x.org, to: [a@x.org]}`:                                          "report.smtp.addr",
		`{addr: "h:25", from: b@x.org, to: [a@x.org], password: hunter2}`:                                 "report.smtp.password: perfbot takes no password from the watch file",
		`{addr: "h:25", from: b@x.org, to: [a@x.org], username: bot}`:                                     "report.smtp.password_env: with username, give exactly one",
		`{addr: "h:25", from: b@x.org, to: [a@x.org], username: bot, password_env: A, password_file: pw}`: "report.smtp.password_env",
		`{addr: "h:25", from: b@x.org, to: [a@x.org], password_env: A}`:                                   "report.smtp.username: required",
		`{addr: "h:25", from: b@x.org, to: [a@x.org], tls: none}`:                                         "report.smtp.tls: want starttls or implicit",
		`{addr: "h:25", from: b@x.org, to: [a@x.org], ca_file: missing.pem}`:                              "report.smtp.ca_file",
		`{addr: "h:25", from: "Bot <b@x.org>", to: [a@x.org]}`:                                            "report.smtp.from",
		`{addr: "h:25", from: b@x.org, to: [a@x.org, "not an address"]}`:                                  "report.smtp.to[1]",
		`{addr: "h:25", from: b@x.org, to: ["a@x.org\rBcc: c@x.org"]}`:                                    "report.smtp.to[0]",
		`{addr: "h:25", from: b@x.org, to: [zoë@x.org]}`:                                                  "report.smtp.to[0]: \"zoë@x.org\" is not ASCII",
		`{addr: "h:25", from: b@x.org, to: [a@x.org], digest: -1}`:                                        "report.smtp.digest",
		`{addr: "h:25", from: b@x.org}`:                                                                   "report.smtp.to: required",
	} {
		_, err := parseSMTP(t, smtp)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want an error with %q", smtp, err, want)
		}
	}
}
