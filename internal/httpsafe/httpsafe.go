// Package httpsafe is what lets perfbot serve face a network: the
// timeouts of its HTTP server (no connection held forever), the headers
// every answer carries (no framing, no sniffing, no foreign reads of its
// resources), the Host names it answers (no DNS rebinding of a loopback
// dashboard) and the read token that a network bind may ask for (a bearer
// token, or a cookie set by a login form). One Handler wraps every
// handler perfbot serve mounts: the dashboard's pages and API, the
// fleet's API and River's UI.
package httpsafe

import (
	"net/http"
)

// Options say what Handler enforces.
type Options struct {
	// Hosts are the host names (without a port) a request may name in
	// its Host header; empty allows any. perfbot serve sets them on a
	// loopback bind (DefaultHosts and --allow-host).
	Hosts []string
	// ReadToken, when set, is needed for every read: as a bearer token,
	// or the cookie the login form sets. Tokens lists more tokens that
	// also allow reads (the write token).
	ReadToken string
	Tokens    []string
	// Secure marks the login cookie Secure (the server speaks HTTPS).
	Secure bool
}

// Handler wraps h: it sets the security headers on every answer, refuses
// a Host not in o.Hosts (421) and, with a read token, asks for it
// (LoginPath serves the login form).
func Handler(o Options, h http.Handler) http.Handler {
	hosts := newHostSet(o.Hosts)
	gate := newGate(o)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetHeaders(w.Header())
		if !hosts.allowed(r.Host) {
			refuseHost(w, r)
			return
		}
		if gate != nil && !gate.pass(w, r) {
			return
		}
		h.ServeHTTP(w, r)
	})
}

// SetHeaders sets the headers every answer carries: no page of another
// origin frames it (CSP frame-ancestors and X-Frame-Options), nor loads
// it as a script, style or image (Cross-Origin-Resource-Policy); no type
// is sniffed; no address leaks to another site in a Referer. A handler
// may set a stricter Content-Security-Policy over it (the dashboard's
// pages do).
func SetHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}
