package notify

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/testutil"
)

var msg = []byte("Subject: test\r\n\r\nhello\r\n")

func send(t *testing.T, srv Server, to ...string) (Result, error) {
	t.Helper()
	return Send(t.Context(), srv, "perfbot@localhost", to, msg)
}

func TestSendStartTLSWithAuth(t *testing.T) {
	for _, mech := range []string{"PLAIN", "LOGIN"} {
		t.Run(mech, func(t *testing.T) {
			s := testutil.StartSMTPServer(t, testutil.SMTPOptions{TLS: "starttls", Users: map[string]string{"bot": "s3cret"}, Mechanisms: []string{mech}})
			res, err := send(t, Server{Addr: s.Addr, RootCAs: s.CA.Pool, Username: "bot", Password: "s3cret"}, "a@example.org")
			if err != nil || len(res.Accepted) != 1 {
				t.Fatalf("Send = %+v, %v", res, err)
			}
			m := s.Messages()
			if len(m) != 1 || !m[0].TLS || m[0].User != "bot" || !strings.Contains(m[0].Data, "hello") {
				t.Fatalf("server received %+v; want one message over TLS as bot", m)
			}
			_, err = send(t, Server{Addr: s.Addr, RootCAs: s.CA.Pool, Username: "bot", Password: "wrong"}, "a@example.org")
			if err == nil || !strings.Contains(err.Error(), "AUTH as bot") {
				t.Errorf("a wrong password: %v", err)
			}
		})
	}
}

func TestSendImplicitTLS(t *testing.T) {
	s := testutil.StartSMTPServer(t, testutil.SMTPOptions{TLS: "implicit"})
	res, err := send(t, Server{Addr: s.Addr, TLS: ImplicitTLS, RootCAs: s.CA.Pool}, "a@example.org")
	if err != nil || len(res.Accepted) != 1 || len(s.Messages()) != 1 || !s.Messages()[0].TLS {
		t.Fatalf("Send = %+v, %v; messages %+v", res, err, s.Messages())
	}
}

// A certificate that the configured CA did not sign is refused, with
// STARTTLS and implicit TLS alike; so is one checked against the
// system's roots.
func TestSendVerifiesCertificate(t *testing.T) {
	other := testutil.NewTestCA(t)
	for _, mode := range []TLSMode{StartTLS, ImplicitTLS} {
		s := testutil.StartSMTPServer(t, testutil.SMTPOptions{TLS: map[TLSMode]string{StartTLS: "starttls", ImplicitTLS: "implicit"}[mode]})
		for _, pool := range []*x509.CertPool{other.Pool, nil} {
			_, err := send(t, Server{Addr: s.Addr, TLS: mode, RootCAs: pool}, "a@example.org")
			var unknown x509.UnknownAuthorityError
			if !errors.As(err, &unknown) {
				t.Errorf("%v with a foreign CA: %v; want x509.UnknownAuthorityError", mode, err)
			}
		}
		if n := len(s.Messages()); n != 0 {
			t.Errorf("%v: %d messages delivered despite the bad certificate", mode, n)
		}
	}
}

func TestRequireTLS(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": false, "::1": false, "localhost": false, "127.8.9.1": false,
		"10.0.0.1": true, "smtp.example.org": true, "192.168.1.2": true, "::ffff:8.8.8.8": true, "": true,
	} {
		if got := RequireTLS(host); got != want {
			t.Errorf("RequireTLS(%q) = %v, want %v", host, got, want)
		}
	}
}

// On loopback a server without STARTTLS is spoken to in plain text.
func TestSendPlainOnLoopback(t *testing.T) {
	s := testutil.StartSMTPServer(t, testutil.SMTPOptions{})
	res, err := send(t, Server{Addr: s.Addr}, "a@example.org")
	if err != nil || len(res.Accepted) != 1 || s.Messages()[0].TLS {
		t.Fatalf("Send = %+v, %v", res, err)
	}
}

// A recipient refused for good (550) or for now (450) does not keep the
// message from the others.
func TestSendRecipientRefusals(t *testing.T) {
	s := testutil.StartSMTPServer(t, testutil.SMTPOptions{TLS: "starttls", Refuse: map[string]int{"gone@x": 550, "full@x": 450}})
	res, err := send(t, Server{Addr: s.Addr, RootCAs: s.CA.Pool}, "gone@x", "a@example.org", "full@x")
	if err != nil || len(res.Accepted) != 1 || res.Refused["gone@x"] == nil || res.Deferred["full@x"] == nil {
		t.Fatalf("Send = %+v, %v", res, err)
	}
	if m := s.Messages(); len(m) != 1 || strings.Join(m[0].To, ",") != "a@example.org" {
		t.Errorf("delivered %+v", m)
	}
	res, err = send(t, Server{Addr: s.Addr, RootCAs: s.CA.Pool}, "gone@x")
	if err != nil || len(res.Accepted) != 0 || res.Refused["gone@x"] == nil {
		t.Errorf("every recipient refused: %+v, %v", res, err)
	}
}

func TestSendServerDown(t *testing.T) {
	s := testutil.StartSMTPServer(t, testutil.SMTPOptions{})
	s.Stop()
	if _, err := send(t, Server{Addr: s.Addr}, "a@example.org"); err == nil || !strings.Contains(err.Error(), s.Addr) {
		t.Errorf("server down: %v", err)
	}
}

// A server that accepts the connection and says nothing is left when the
// context ends (Send's own limit is Timeout).
func TestSendStalledServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Send(ctx, Server{Addr: l.Addr().String()}, "p@x", []string{"a@x"}, msg)
	if err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("stalled server: %v after %v", err, time.Since(start))
	}
}

// A server on an address that is not loopback (this machine's own
// network address) that does not offer STARTTLS gets nothing.
func TestSendRefusesPlainTextOffLoopback(t *testing.T) {
	var ip net.IP
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			ip = n.IP
			break
		}
	}
	if ip == nil {
		t.Skip("this machine has no IPv4 address besides loopback to serve on (the rule itself: TestRequireTLS)")
	}
	s := testutil.StartSMTPServer(t, testutil.SMTPOptions{Listen: net.JoinHostPort(ip.String(), "0")})
	_, err := send(t, Server{Addr: s.Addr}, "a@example.org")
	if err == nil || !strings.Contains(err.Error(), "does not offer STARTTLS") {
		t.Errorf("plain text to %s: %v; want a refusal", s.Addr, err)
	}
	if n := len(s.Messages()); n != 0 {
		t.Errorf("%d messages went in plain text off loopback", n)
	}
}

// A context that ends while the server takes the message (a SIGTERM
// then) does not cut the exchange: the sender hears that it was taken.
// One that ends before DATA stops the send.
func TestSendFinishesDataAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := testutil.StartSMTPServer(t, testutil.SMTPOptions{TLS: "starttls", OnData: func() {
		cancel()
		time.Sleep(100 * time.Millisecond) // the cancel has its effect, if it has one
	}})
	res, err := Send(ctx, Server{Addr: s.Addr, RootCAs: s.CA.Pool}, "p@x", []string{"a@x"}, msg)
	if err != nil || len(res.Accepted) != 1 {
		t.Errorf("cancelled during DATA: %+v, %v; want accepted", res, err)
	}
	if _, err := Send(ctx, Server{Addr: s.Addr, RootCAs: s.CA.Pool}, "p@x", []string{"a@x"}, msg); err == nil {
		t.Error("a send with a cancelled context went through")
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("%d messages, want 1", n)
	}
}
