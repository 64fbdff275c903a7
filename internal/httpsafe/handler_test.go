package httpsafe

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// do sends method path to srv with the Host host (when not "") and the
// header pairs hdr; it returns the answer and its body.
func do(t *testing.T, c *http.Client, method, u, host string, body io.Reader, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestHosts: on a loopback server that answers for its default names, a
// request naming another host (DNS rebinding) is refused with 421 and
// says how to allow it; the default names, with and without the port,
// and an allowed one pass.
func TestHosts(t *testing.T) {
	reached := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++; io.WriteString(w, "secret") })
	srv := httptest.NewUnstartedServer(nil)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	srv.Config.Handler = Handler(Options{Hosts: append(DefaultHosts(srv.Listener.Addr().String()), "perf.example.org")}, h)
	srv.Start()
	defer srv.Close()
	for _, tc := range []struct {
		host string
		code int
	}{
		{"attacker.example:" + port, http.StatusMisdirectedRequest},
		{"attacker.example", http.StatusMisdirectedRequest},
		{"localhost.attacker.example:" + port, http.StatusMisdirectedRequest},
		{"127.0.0.1.nip.io:" + port, http.StatusMisdirectedRequest},
		{"localhost:" + port, http.StatusOK},
		{"LOCALHOST.:" + port, http.StatusOK},
		{"127.0.0.1:" + port, http.StatusOK},
		{"[::1]:" + port, http.StatusOK},
		{"perf.example.org", http.StatusOK},
	} {
		resp, body := do(t, http.DefaultClient, "GET", srv.URL+"/api/jobs", tc.host, nil)
		if resp.StatusCode != tc.code || (tc.code != 200 && (strings.Contains(body, "secret") || !strings.Contains(body, "--allow-host"))) {
			t.Errorf("Host %s: %d %q, want %d", tc.host, resp.StatusCode, body, tc.code)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("Host %s: the answer lacks the security headers: %v", tc.host, resp.Header)
		}
	}
	if reached != 5 {
		t.Errorf("the handler was reached %d times, want 5 (the allowed hosts)", reached)
	}
}

// TestHeaders: every answer carries the headers, also one the handler
// wrote in a hurry (an error), and a handler may tighten the CSP.
func TestHeaders(t *testing.T) {
	srv := httptest.NewServer(Handler(Options{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/strict" {
			w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		}
		http.Error(w, "no", http.StatusTeapot)
	})))
	defer srv.Close()
	for path, csp := range map[string]string{"/": "frame-ancestors 'none'", "/strict": "default-src 'self'; frame-ancestors 'none'"} {
		resp, _ := do(t, http.DefaultClient, "GET", srv.URL+path, "", nil)
		want := map[string]string{"Content-Security-Policy": csp, "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
			"Referrer-Policy": "same-origin", "Cross-Origin-Resource-Policy": "same-origin"}
		for k, v := range want {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("GET %s: %s %q, want %q", path, k, got, v)
			}
		}
	}
}

// TestReadToken: with a read token, a client without it gets 401 (JSON
// under /api/), a browser's page view goes to the login form, which sets
// the cookie for the right token only and returns to the page; the
// bearer token, the write token and the cookie each let a read through;
// the form sends nowhere but this server.
func TestReadToken(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "data of "+r.URL.RequestURI()) })
	srv := httptest.NewServer(Handler(Options{ReadToken: "r34d", Tokens: []string{"wr1te"}}, h))
	defer srv.Close()

	resp, body := do(t, noRedirect, "GET", srv.URL+"/api/jobs", "", nil)
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || !strings.Contains(body, "PERFBOT_READ_TOKEN") || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("GET /api/jobs without a token: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	for _, tok := range []string{"wrong", "r34", "r34dx", ""} {
		if resp, body := do(t, noRedirect, "GET", srv.URL+"/api/jobs", "", nil, "Authorization", "Bearer "+tok); resp.StatusCode != 401 || strings.Contains(body, "data of") {
			t.Errorf("GET /api/jobs with the token %q: %d %q, want 401", tok, resp.StatusCode, body)
		}
	}
	for _, tok := range []string{"r34d", "wr1te"} {
		if resp, body := do(t, noRedirect, "GET", srv.URL+"/api/jobs", "", nil, "Authorization", "Bearer "+tok); resp.StatusCode != 200 || body != "data of /api/jobs" {
			t.Errorf("GET /api/jobs with the token %q: %d %q, want the data", tok, resp.StatusCode, body)
		}
	}
	// A browser: the page view goes to the form.
	resp, _ = do(t, noRedirect, "GET", srv.URL+"/jobs/x/history?metric=m", "", nil, "Accept", "text/html,*/*")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != LoginPath+"?next="+url.QueryEscape("/jobs/x/history?metric=m") {
		t.Errorf("a page view without the cookie: %d to %q, want 303 to the login form", resp.StatusCode, loc)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, body = do(t, browser, "GET", srv.URL+"/jobs/x/history?metric=m", "", nil, "Accept", "text/html")
	if resp.StatusCode != 200 || !strings.Contains(body, `name="token"`) || !strings.Contains(body, `value="/jobs/x/history?metric=m"`) {
		t.Fatalf("following the redirect: %d %q, want the login form", resp.StatusCode, body)
	}
	form := func(token, next string) (*http.Response, string) {
		return do(t, browser, "POST", srv.URL+LoginPath, "", strings.NewReader(url.Values{"token": {token}, "next": {next}}.Encode()),
			"Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
	}
	if resp, body := form("wrong", "/"); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "Wrong token") {
		t.Errorf("the form with a wrong token: %d %q", resp.StatusCode, body)
	}
	if u, _ := url.Parse(srv.URL); len(jar.Cookies(u)) != 0 {
		t.Errorf("a wrong token set a cookie: %v", jar.Cookies(u))
	}
	resp, body = form("r34d", "/jobs/x/history?metric=m")
	if resp.StatusCode != 200 || body != "data of /jobs/x/history?metric=m" {
		t.Errorf("the form with the token: %d %q, want the page asked for", resp.StatusCode, body)
	}
	u, _ := url.Parse(srv.URL)
	cs := jar.Cookies(u)
	if len(cs) != 1 || cs[0].Name != CookieName || strings.Contains(cs[0].Value, "r34d") {
		t.Errorf("cookies after the login: %v", cs)
	}
	if resp, body := do(t, browser, "GET", srv.URL+"/api/jobs", "", nil); resp.StatusCode != 200 || body != "data of /api/jobs" {
		t.Errorf("the page's API call with the cookie: %d %q", resp.StatusCode, body)
	}
	// Logging out (POST only) clears the cookie.
	if resp, _ := do(t, noRedirect, "GET", srv.URL+LogoutPath, "", nil, "Cookie", CookieName+"="+cookieValue("r34d")); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: %d, want 405", LogoutPath, resp.StatusCode)
	}
	if resp, body := do(t, browser, "POST", srv.URL+LogoutPath, "", nil); resp.StatusCode != 200 || !strings.Contains(body, `name="token"`) {
		t.Errorf("POST %s: %d %q, want the login form", LogoutPath, resp.StatusCode, body)
	}
	if resp, _ := do(t, browser, "GET", srv.URL+"/api/jobs", "", nil); resp.StatusCode != 401 || len(jar.Cookies(u)) != 0 {
		t.Errorf("after the logout: %d, cookies %v; want 401 and none", resp.StatusCode, jar.Cookies(u))
	}
	// A forged cookie is no login.
	if resp, _ := do(t, noRedirect, "GET", srv.URL+"/api/jobs", "", nil, "Cookie", CookieName+"="+cookieValue("guess")); resp.StatusCode != 401 {
		t.Errorf("a forged cookie: %d, want 401", resp.StatusCode)
	}
	// The form never sends a browser to another site.
	for _, next := range []string{"https://attacker.example/", "//attacker.example/", "/\\attacker.example", "javascript:alert(1)",
		"/\t/attacker.example", "/\n/attacker.example", "/\r\n/attacker.example", "/a\\..\\\\attacker.example"} {
		resp, _ := do(t, noRedirect, "POST", srv.URL+LoginPath, "", strings.NewReader(url.Values{"token": {"r34d"}, "next": {next}}.Encode()),
			"Content-Type", "application/x-www-form-urlencoded")
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/" {
			t.Errorf("next=%q: %d to %q, want 303 to /", next, resp.StatusCode, loc)
		}
	}
}
