package httpsafe

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBindCheck: a loopback bind is always allowed; another needs a read
// token and TLS, or --insecure (then a warning names what is missing).
func TestBindCheck(t *testing.T) {
	lo := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8080}
	lo6 := &net.TCPAddr{IP: net.ParseIP("::1"), Port: 8080}
	any := &net.TCPAddr{IP: net.IPv4zero, Port: 8080}
	for _, tc := range []struct {
		b         Bind
		at        net.Addr
		tls       bool
		err, warn string
	}{
		{Bind{Addr: "127.0.0.1:8080"}, lo, false, "", ""},
		{Bind{Addr: "[::1]:8080"}, lo6, false, "", ""},
		{Bind{Addr: ":8080"}, any, false, "no read token (PERFBOT_READ_TOKEN)", ""},
		{Bind{Addr: ":8080", ReadToken: "r"}, any, false, "no TLS (--tls-cert, --tls-key)", ""},
		{Bind{Addr: ":8080"}, any, true, "no read token", ""},
		{Bind{Addr: ":8080", ReadToken: "r"}, any, true, "", ""},
		{Bind{Addr: ":8080", Insecure: true}, any, false, "", "--insecure: 0.0.0.0:8080 is not a loopback address, and the server has no read token"},
	} {
		warn, err := tc.b.Check(tc.at, tc.tls)
		if (err == nil) != (tc.err == "") || (err != nil && (!strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--insecure"))) ||
			(tc.warn == "") != (warn == "") || !strings.Contains(warn, tc.warn) {
			t.Errorf("%+v at %v (TLS %v): warning %q, error %v; want %q, %q", tc.b, tc.at, tc.tls, warn, err, tc.warn, tc.err)
		}
	}
	if hs := (Bind{Addr: "localhost:0", AllowHosts: []string{"perf.lan"}}).Hosts(lo); !slices.Contains(hs, "perf.lan") || !slices.Contains(hs, "localhost") || !slices.Contains(hs, "::1") {
		t.Errorf("loopback hosts: %v", hs)
	}
	if hs := (Bind{Addr: ":8080"}).Hosts(any); hs != nil {
		t.Errorf("a network bind without --allow-host answers %v, want any name", hs)
	}
	if hs := (Bind{Addr: ":8080", AllowHosts: []string{"perf.lan"}}).Hosts(any); !slices.Contains(hs, "perf.lan") {
		t.Errorf("a network bind with --allow-host: %v", hs)
	}
}

// TestBindTLS: the certificate and key go together, and a file that is
// not one is named.
func TestBindTLS(t *testing.T) {
	if c, err := (Bind{}).TLS(); c != nil || err != nil {
		t.Errorf("no TLS: %v %v", c, err)
	}
	if _, err := (Bind{CertFile: "c.pem"}).TLS(); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("a certificate without a key: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "cert.pem")
	os.WriteFile(bad, []byte("not a certificate"), 0o600)
	if _, err := (Bind{CertFile: bad, KeyFile: bad}).TLS(); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a bad certificate: %v", err)
	}
}
