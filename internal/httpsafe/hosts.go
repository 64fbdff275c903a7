package httpsafe

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// DefaultHosts are the Host names a loopback bind at addr answers:
// localhost, 127.0.0.1, ::1 and the bound address's host.
func DefaultHosts(addr string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	return hosts
}

// IsLoopback reports whether the listening address addr (host:port) is
// a loopback address.
func IsLoopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

type hostSet map[string]bool

func newHostSet(hosts []string) hostSet {
	if len(hosts) == 0 {
		return nil
	}
	s := hostSet{}
	for _, h := range hosts {
		s[normalHost(h)] = true
	}
	return s
}

// normalHost is a host name without its port and brackets, in lower
// case, without a final dot.
func normalHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ".")
	return h
}

func (s hostSet) allowed(host string) bool {
	return s == nil || s[normalHost(host)]
}

// refuseHost answers a request for a host this server is not: 421, with
// what to do if the name is the user's own.
func refuseHost(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if len(host) > 100 {
		host = host[:100] + "..."
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusMisdirectedRequest)
	fmt.Fprintf(w, "perfbot serve does not answer for the host %q: it answers only for the names it is reached by on this machine "+
		"(a foreign name on a loopback address is how a web page reads a local server by DNS rebinding). "+
		"If the name is yours, start perfbot serve with --allow-host NAME.\n", host)
}
