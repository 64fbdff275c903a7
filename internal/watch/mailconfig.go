package watch

import (
	"crypto/x509"
	"fmt"
	"net"
	netmail "net/mail"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/perfbot/perfbot/internal/notify"
	"github.com/perfbot/perfbot/internal/report"
)

// SMTPConfig is the mail server and recipients of findings (the watch
// file's report.smtp; docs/watch.md, "Mail").
type SMTPConfig struct {
	Addr string         // host:port
	TLS  notify.TLSMode // starttls, or implicit (the default on port 465)
	// CAFile holds the PEM certificates that verify a private relay
	// (absolute); "" verifies with the system's roots.
	CAFile string
	// Username authenticates (AUTH PLAIN or LOGIN) with the password in
	// the environment variable PasswordEnv or in the file PasswordFile
	// (absolute), read at each delivery; never in the watch file.
	Username, PasswordEnv, PasswordFile string
	From                                string
	To                                  []string
	Author                              bool // also mail the culprit's author
	// Digest: when one cycle has more than this many mails for one
	// recipient, they go as one digest mail; 0 never digests.
	Digest int
}

// DefaultDigest is report.smtp.digest's default.
const DefaultDigest = 5

// Server is the mail server as notify sends to it: the CA file and the
// password are read now, so a rotated password needs no restart.
func (s *SMTPConfig) Server() (notify.Server, error) {
	srv := notify.Server{Addr: s.Addr, TLS: s.TLS, Username: s.Username}
	if s.CAFile != "" {
		pem, err := os.ReadFile(s.CAFile)
		if err != nil {
			return srv, fmt.Errorf("report.smtp.ca_file: %w", err)
		}
		srv.RootCAs = x509.NewCertPool()
		if !srv.RootCAs.AppendCertsFromPEM(pem) {
			return srv, fmt.Errorf("report.smtp.ca_file %s: no PEM certificate in it", s.CAFile)
		}
	}
	switch {
	case s.PasswordEnv != "":
		pw, ok := os.LookupEnv(s.PasswordEnv)
		if !ok || pw == "" {
			return srv, fmt.Errorf("report.smtp.password_env: the environment variable %s is not set", s.PasswordEnv)
		}
		srv.Password = pw
	case s.PasswordFile != "":
		data, err := os.ReadFile(s.PasswordFile)
		if err != nil {
			return srv, fmt.Errorf("report.smtp.password_file: %w", err)
		}
		srv.Password = strings.TrimRight(string(data), "\r\n")
	}
	return srv, nil
}

func (p *parser) smtp(n *yaml.Node, field string) *SMTPConfig {
	s := &SMTPConfig{Digest: DefaultDigest}
	tlsMode := ""
	p.fields(n, field, map[string]func(*yaml.Node, string){
		"addr":          func(n *yaml.Node, f string) { s.Addr = p.str(n, f) },
		"tls":           func(n *yaml.Node, f string) { tlsMode = p.str(n, f) },
		"ca_file":       func(n *yaml.Node, f string) { s.CAFile = p.abs(p.str(n, f)) },
		"username":      func(n *yaml.Node, f string) { s.Username = p.str(n, f) },
		"password_env":  func(n *yaml.Node, f string) { s.PasswordEnv = p.str(n, f) },
		"password_file": func(n *yaml.Node, f string) { s.PasswordFile = p.abs(p.str(n, f)) },
		"password": func(n *yaml.Node, f string) {
			p.errorf(n, f, "perfbot takes no password from the watch file, which is shown and copied: name an environment variable (password_env) or a file (password_file) holding it")
		},
		"from": func(n *yaml.Node, f string) {
			if s.From = p.str(n, f); s.From != "" {
				if err := CheckAddress(s.From); err != nil {
					p.errorf(n, f, "want the sender's address: %v", err)
				}
			}
		},
		"to": func(n *yaml.Node, f string) {
			s.To = p.strings(n, f)
			for i, to := range s.To {
				if err := CheckAddress(to); err != nil {
					at := n
					if n.Kind == yaml.SequenceNode && i < len(n.Content) {
						at = n.Content[i]
					}
					p.errorf(at, fmt.Sprintf("%s[%d]", f, i), "%v", err)
				}
			}
		},
		"author": func(n *yaml.Node, f string) { s.Author = p.bool(n, f) },
		"digest": func(n *yaml.Node, f string) {
			if s.Digest = p.int(n, f); s.Digest < 0 {
				p.errorf(n, f, "want 0 (never) or more mails, not %d", s.Digest)
			}
		},
	})
	host, port, err := net.SplitHostPort(s.Addr)
	if _, perr := strconv.ParseUint(port, 10, 16); err != nil || host == "" || perr != nil {
		p.errorf(n, field+".addr", "want host:port of the mail server (such as smtp.example.org:587), not %q", s.Addr)
	}
	switch tlsMode {
	case "":
		if port == "465" {
			s.TLS = notify.ImplicitTLS
		}
	case "starttls":
	case "implicit":
		s.TLS = notify.ImplicitTLS
	default:
		p.errorf(n, field+".tls", "want starttls or implicit (TLS from the first byte, as on port 465), not %q", tlsMode)
	}
	if s.CAFile != "" {
		if _, err := os.Stat(s.CAFile); err != nil {
			p.errorf(n, field+".ca_file", "%v", err)
		}
	}
	switch {
	case s.Username == "" && (s.PasswordEnv != "" || s.PasswordFile != ""):
		p.errorf(n, field+".username", "required with password_env or password_file: the account to authenticate as")
	case s.Username != "" && (s.PasswordEnv == "") == (s.PasswordFile == ""):
		p.errorf(n, field+".password_env", "with username, give exactly one of password_env (an environment variable) and password_file (a file) holding the password")
	}
	if s.From == "" {
		p.errorf(n, field+".from", "required: the sender's address")
	}
	if len(s.To) == 0 && !s.Author {
		p.errorf(n, field+".to", "required unless author: true: the recipients")
	}
	return s
}

// CheckAddress refuses what is not a bare ASCII mail address
// (local@domain) that may go into a header and an SMTP command.
func CheckAddress(addr string) error {
	if addr == "" {
		return fmt.Errorf("no address")
	}
	if err := report.CheckHeaderText("address", addr); err != nil {
		return err
	}
	if strings.IndexFunc(addr, func(r rune) bool { return r >= 0x80 }) >= 0 {
		return fmt.Errorf("%q is not ASCII: perfbot does not send SMTPUTF8 addresses", addr)
	}
	a, err := netmail.ParseAddress(addr)
	if err != nil || a.Address != addr || a.Name != "" {
		return fmt.Errorf("%q is not a mail address such as perf@example.org", addr)
	}
	return nil
}
