package notify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// TLSMode is how a connection to the mail server is encrypted.
type TLSMode int

const (
	// StartTLS connects in plain text and upgrades with STARTTLS (port
	// 587 or 25). Off loopback a server that does not offer STARTTLS is
	// refused; on loopback it is used when offered.
	StartTLS TLSMode = iota
	// ImplicitTLS speaks TLS from the first byte (port 465).
	ImplicitTLS
)

func (m TLSMode) String() string {
	if m == ImplicitTLS {
		return "implicit"
	}
	return "starttls"
}

// Server is a mail server and how to reach it.
type Server struct {
	Addr string // host:port
	TLS  TLSMode
	// RootCAs verifies the server's certificate; nil means the system's
	// roots. Certificates are always verified.
	RootCAs *x509.CertPool
	// Username, when set, authenticates with AUTH PLAIN or LOGIN, as the
	// server offers, with Password.
	Username, Password string
}

// Timeout bounds one whole exchange with the server: a server that stalls
// cannot hold perfbot.
const Timeout = time.Minute

// RequireTLS says whether a connection to host must be encrypted: always,
// unless host is a loopback address (or "localhost"), where nothing
// crosses a network.
func RequireTLS(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// Result is what the server did with each recipient of a message.
type Result struct {
	Accepted []string
	// Refused are the recipients refused for good (a 5xx reply): not
	// worth trying again. Deferred were refused for now (4xx).
	Refused, Deferred map[string]error
}

// RefusedError is a message the server refused for good (a 5xx reply to
// its content), for every recipient.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return "message refused: " + e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Permanent says whether an SMTP reply is a permanent failure (5xx).
func Permanent(err error) bool {
	var se *smtp.SMTPError
	return errors.As(err, &se) && se.Code >= 500 && se.Code < 600
}

// Send delivers msg from from to the addresses of to through srv, within
// Timeout. A recipient the server refuses does not keep the message from
// the others: Result says who was accepted, refused for good, or deferred.
// An error means nothing was delivered (no connection, no TLS, a failed
// AUTH, a refused sender, a failed DATA); it is a *RefusedError when the
// server refused the message itself for good.
func Send(ctx context.Context, srv Server, from string, to []string, msg []byte) (Result, error) {
	res := Result{Refused: map[string]error{}, Deferred: map[string]error{}}
	if len(to) == 0 {
		return res, nil
	}
	// The exchange has its own deadline. Until DATA, ctx ending ends it
	// too; from DATA on it runs to its end (within Timeout), so that a
	// message the server takes is one perfbot hears it took.
	parent := ctx
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), Timeout)
	defer cancel()
	if dl, ok := parent.Deadline(); ok && time.Until(dl) < Timeout {
		ctx, cancel = context.WithDeadline(ctx, dl)
		defer cancel()
	}
	unlink := context.AfterFunc(parent, cancel)
	defer unlink()
	c, err := dial(ctx, srv)
	if err != nil {
		return res, fmt.Errorf("mail server %s: %w", srv.Addr, err)
	}
	defer c.Close()
	if err := c.Mail(from, nil); err != nil {
		return res, fmt.Errorf("mail server %s: sender %s: %w", srv.Addr, from, err)
	}
	for _, rcpt := range to {
		if err := c.Rcpt(rcpt, nil); err != nil {
			if Permanent(err) {
				res.Refused[rcpt] = err
			} else {
				res.Deferred[rcpt] = err
			}
			continue
		}
		res.Accepted = append(res.Accepted, rcpt)
	}
	if len(res.Accepted) == 0 {
		return res, nil
	}
	accepted := res.Accepted
	res.Accepted = nil
	if !unlink() {
		return res, fmt.Errorf("mail server %s: %w", srv.Addr, parent.Err())
	}
	w, err := c.Data()
	if err != nil {
		return res, dataError(srv.Addr, err)
	}
	if _, err := w.Write(msg); err != nil {
		return res, fmt.Errorf("mail server %s: %w", srv.Addr, err)
	}
	if err := w.Close(); err != nil {
		return res, dataError(srv.Addr, err)
	}
	res.Accepted = accepted
	_ = c.Quit()
	return res, nil
}

func dataError(addr string, err error) error {
	err = fmt.Errorf("mail server %s: %w", addr, err)
	if Permanent(err) {
		return &RefusedError{Err: err}
	}
	return err
}

// dial connects, encrypts as srv and the address ask, and authenticates.
// The connection is closed when ctx ends, whatever the client is doing.
func dial(ctx context.Context, srv Server) (*smtp.Client, error) {
	host, _, err := net.SplitHostPort(srv.Addr)
	if err != nil {
		return nil, err
	}
	tlsConf := &tls.Config{ServerName: host, RootCAs: srv.RootCAs, MinVersion: tls.VersionTLS12}
	c, err := connect(ctx, srv, host, tlsConf)
	if err != nil {
		return nil, err
	}
	if _, ok := c.TLSConnectionState(); !ok && RequireTLS(host) {
		c.Close()
		return nil, fmt.Errorf("refusing to talk to %s without TLS: it is not on loopback", host)
	}
	if srv.Username != "" {
		if err := auth(c, srv); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func connect(ctx context.Context, srv Server, host string, tlsConf *tls.Config) (*smtp.Client, error) {
	open := func() (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", srv.Addr)
		if err != nil {
			return nil, err
		}
		context.AfterFunc(ctx, func() { conn.Close() })
		return conn, nil
	}
	conn, err := open()
	if err != nil {
		return nil, err
	}
	if srv.TLS == ImplicitTLS {
		tc := tls.Client(conn, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("TLS: %w", err)
		}
		return client(ctx, tc), nil
	}
	if !RequireTLS(host) {
		// On loopback STARTTLS is used when the server offers it.
		c := client(ctx, conn)
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return c, nil
		}
		c.Close()
		if conn, err = open(); err != nil {
			return nil, err
		}
	}
	c, err := smtp.NewClientStartTLS(conn, tlsConf)
	if err != nil {
		conn.Close()
		if strings.Contains(err.Error(), "doesn't support STARTTLS") {
			return nil, errors.New("the server does not offer STARTTLS, and TLS is required off loopback (tls: implicit for port 465)")
		}
		return nil, fmt.Errorf("STARTTLS: %w", err)
	}
	// The TLS handshake happens on the next command: here, so that a
	// certificate that does not verify is the error, not what follows.
	if err := c.Hello("localhost"); err != nil {
		c.Close()
		return nil, fmt.Errorf("STARTTLS: %w", err)
	}
	limit(ctx, c)
	return c, nil
}

func client(ctx context.Context, conn net.Conn) *smtp.Client {
	c := smtp.NewClient(conn)
	limit(ctx, c)
	return c
}

// limit makes each command's timeout the time left to ctx.
func limit(ctx context.Context, c *smtp.Client) {
	if dl, ok := ctx.Deadline(); ok {
		c.CommandTimeout = time.Until(dl)
		c.SubmissionTimeout = c.CommandTimeout
	}
}

// auth authenticates with PLAIN, else LOGIN.
func auth(c *smtp.Client, srv Server) error {
	var a sasl.Client
	switch {
	case c.SupportsAuth(sasl.Plain):
		a = sasl.NewPlainClient("", srv.Username, srv.Password)
	case c.SupportsAuth(sasl.Login):
		a = sasl.NewLoginClient(srv.Username, srv.Password)
	default:
		_, mechs := c.Extension("AUTH")
		if mechs == "" {
			mechs = "none"
		}
		return fmt.Errorf("AUTH as %s: the server offers neither PLAIN nor LOGIN (offers: %s)", srv.Username, mechs)
	}
	if err := c.Auth(a); err != nil {
		return fmt.Errorf("AUTH as %s: %w", srv.Username, err)
	}
	return nil
}
