package testutil

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// SMTPOptions configure a test mail server.
type SMTPOptions struct {
	// TLS is "" (plain text only), "starttls" (offers STARTTLS) or
	// "implicit" (TLS from the first byte, as on port 465).
	TLS string
	// CA signs the server's certificate; nil makes one (SMTPServer.CA).
	CA *TestCA
	// Users, when set, are the accounts AUTH accepts, and MAIL needs one.
	Users map[string]string
	// Mechanisms are the AUTH mechanisms offered: PLAIN and LOGIN when
	// nil.
	Mechanisms []string
	// Refuse maps a recipient to the SMTP code its RCPT gets (550, 450).
	Refuse map[string]int
	// Listen is the address to serve on; default a free port of
	// 127.0.0.1.
	Listen string
	// OnData, when set, runs once a message is received and kept, before
	// the server answers it (a test can cancel the sender's context
	// there).
	OnData func()
}

// SMTPMessage is one message the server accepted.
type SMTPMessage struct {
	From string
	To   []string
	Data string
	TLS  bool   // it came over TLS
	User string // the account it was sent as, "" without AUTH
}

// SMTPServer is a real SMTP server (emersion/go-smtp) on a loopback port,
// which keeps the messages it accepts. Stop and Start take it down and up
// again on the same address.
type SMTPServer struct {
	Addr string
	CA   *TestCA
	opts SMTPOptions

	mu   sync.Mutex
	msgs []SMTPMessage
	srv  *smtp.Server
	l    net.Listener
}

// StartSMTPServer starts a server, stopped when t ends.
func StartSMTPServer(t testing.TB, opts SMTPOptions) *SMTPServer {
	t.Helper()
	s := &SMTPServer{opts: opts, CA: opts.CA, Addr: opts.Listen}
	if s.Addr == "" {
		s.Addr = "127.0.0.1:0"
	}
	if s.CA == nil {
		s.CA = NewTestCA(t)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Start serves on Addr (again, after Stop).
func (s *SMTPServer) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		_, isTLS := c.TLSConnectionState()
		return &smtpSession{s: s, cur: SMTPMessage{TLS: isTLS}}, nil
	}))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = s.opts.TLS == ""
	tlsConf := &tls.Config{Certificates: []tls.Certificate{s.CA.Server}}
	l, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return err
	}
	switch s.opts.TLS {
	case "starttls":
		srv.TLSConfig = tlsConf
	case "implicit":
		l = tls.NewListener(l, tlsConf)
	}
	s.Addr = l.Addr().String()
	srv.ErrorLog = log.New(io.Discard, "", 0)
	s.srv, s.l = srv, l
	go srv.Serve(l)
	return nil
}

// Stop closes the server and its connections.
func (s *SMTPServer) Stop() {
	s.mu.Lock()
	srv, l := s.srv, s.l
	s.srv, s.l = nil, nil
	s.mu.Unlock()
	if srv != nil {
		l.Close() // Serve may not have taken it yet
		srv.Close()
	}
}

// Messages returns the messages accepted so far.
func (s *SMTPServer) Messages() []SMTPMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SMTPMessage(nil), s.msgs...)
}

type smtpSession struct {
	s   *SMTPServer
	cur SMTPMessage
}

func (x *smtpSession) Reset()        { x.cur = SMTPMessage{TLS: x.cur.TLS, User: x.cur.User} }
func (x *smtpSession) Logout() error { return nil }

func (x *smtpSession) AuthMechanisms() []string {
	if x.s.opts.Mechanisms != nil {
		return x.s.opts.Mechanisms
	}
	return []string{sasl.Plain, sasl.Login}
}

func (x *smtpSession) Auth(mech string) (sasl.Server, error) {
	check := func(user, pass string) error {
		if want, ok := x.s.opts.Users[user]; !ok || want != pass {
			return smtp.ErrAuthFailed
		}
		x.cur.User = user
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(_, user, pass string) error { return check(user, pass) }), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

func (x *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if len(x.s.opts.Users) > 0 && x.cur.User == "" {
		return smtp.ErrAuthRequired
	}
	x.cur.From = from
	return nil
}

func (x *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if code := x.s.opts.Refuse[to]; code != 0 {
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{code / 100, 1, 1}, Message: "no such user here"}
	}
	x.cur.To = append(x.cur.To, to)
	return nil
}

func (x *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.cur.Data = string(b)
	x.s.mu.Lock()
	x.s.msgs = append(x.s.msgs, x.cur)
	x.s.mu.Unlock()
	if x.s.opts.OnData != nil {
		x.s.opts.OnData()
	}
	return nil
}

// loginServer is the server side of AUTH LOGIN (which go-sasl has only as
// a client): a username and a password, each asked for.
type loginServer struct {
	check func(user, pass string) error
	step  int
	user  string
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	switch l.step++; l.step {
	case 1:
		if resp != nil {
			l.user, l.step = string(resp), 2
			return []byte("Password:"), false, nil
		}
		return []byte("Username:"), false, nil
	case 2:
		l.user = string(resp)
		return []byte("Password:"), false, nil
	case 3:
		return nil, true, l.check(l.user, string(bytes.TrimSpace(resp)))
	}
	return nil, true, errors.New("unexpected LOGIN response")
}
