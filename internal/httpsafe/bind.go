package httpsafe

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
)

// Bind is how perfbot serve faces its clients: where it listens, the
// Host names it answers beside the defaults, its read token and TLS.
type Bind struct {
	// Addr is the address asked for (--addr).
	Addr string
	// AllowHosts are more Host names to answer (--allow-host).
	AllowHosts []string
	// ReadToken is PERFBOT_READ_TOKEN.
	ReadToken string
	// CertFile and KeyFile serve HTTPS (--tls-cert, --tls-key).
	CertFile, KeyFile string
	// Insecure allows a network bind without a read token or TLS.
	Insecure bool
}

// TLS loads the certificate and key; nil without them.
func (b Bind) TLS() (*tls.Config, error) {
	if b.CertFile == "" && b.KeyFile == "" {
		return nil, nil
	}
	if b.CertFile == "" || b.KeyFile == "" {
		return nil, errors.New("--tls-cert and --tls-key go together: give both, or neither")
	}
	cert, err := tls.LoadX509KeyPair(b.CertFile, b.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s --tls-key %s: %w", b.CertFile, b.KeyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Check judges the address the server listens on (its listener's, the
// port chosen): a loopback one is always allowed; any other reaches
// whoever is on the network, so it needs a read token (or nobody's reads
// are private) and TLS (or the tokens travel in the clear), unless
// Insecure. With Insecure it returns what is missing, as a warning.
func (b Bind) Check(listening net.Addr, tlsOn bool) (warning string, err error) {
	if IsLoopback(listening.String()) {
		return "", nil
	}
	var missing []string
	if b.ReadToken == "" {
		missing = append(missing, "no read token (PERFBOT_READ_TOKEN): whoever reaches it reads the stores and the job files")
	}
	if !tlsOn {
		missing = append(missing, "no TLS (--tls-cert, --tls-key): its tokens and data travel in the clear")
	}
	if len(missing) == 0 {
		return "", nil
	}
	msg := fmt.Sprintf("%s is not a loopback address, and the server has %s", listening, strings.Join(missing, "; "))
	if !b.Insecure {
		return "", fmt.Errorf("--addr %s: %s; fix that, or say --insecure", b.Addr, msg)
	}
	return "--insecure: " + msg, nil
}

// Hosts are the Host names the server answers at the address listening:
// on a loopback address DefaultHosts, the host of Addr and AllowHosts (a
// page of another site that rebinds its name to 127.0.0.1 is refused);
// on another address any name, unless AllowHosts lists some.
func (b Bind) Hosts(listening net.Addr) []string {
	if !IsLoopback(listening.String()) && len(b.AllowHosts) == 0 {
		return nil
	}
	hosts := DefaultHosts(listening.String())
	if h, _, err := net.SplitHostPort(b.Addr); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	return append(hosts, b.AllowHosts...)
}
