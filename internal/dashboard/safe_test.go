package dashboard

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/perfbot/perfbot/internal/store"
)

// TestEveryMountSafe: the pages, the API, the static files, a 404 and
// every mounted handler (the fleet's API, River's UI) answer with the
// security headers and refuse a Host the server does not answer for;
// the pages keep their stricter CSP.
func TestEveryMountSafe(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mounted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "mounted "+r.URL.Path) })
	srv, err := New(context.Background(), Config{Open: []*store.Store{st}, Hosts: []string{"127.0.0.1", "localhost"},
		Mounts: []Mount{{Prefix: "/fleet", Handler: mounted}, {Prefix: "/riverui", Handler: mounted}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for _, path := range []string{"/", "/api/jobs", "/static/app.js", "/nowhere", "/fleet/api/jobs", "/riverui/", "/riverui/api/jobs"} {
		for _, host := range []string{"", "attacker.example"} {
			req, _ := http.NewRequest("GET", ts.URL+path, nil)
			if host != "" {
				req.Host = host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			h := resp.Header
			if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" ||
				h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" || h.Get("Cross-Origin-Resource-Policy") != "same-origin" {
				t.Errorf("GET %s (Host %q): the headers %v lack the security headers", path, host, h)
			}
			if host != "" && (resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(string(body), "mounted")) {
				t.Errorf("GET %s with Host %s: %d %q, want 421", path, host, resp.StatusCode, body)
			}
			if host == "" && resp.StatusCode == http.StatusMisdirectedRequest {
				t.Errorf("GET %s: refused its own host", path)
			}
			pageCSP := strings.Contains(h.Get("Content-Security-Policy"), "default-src 'self'")
			if mount := strings.HasPrefix(path, "/fleet") || strings.HasPrefix(path, "/riverui"); host == "" && pageCSP == mount {
				t.Errorf("GET %s: CSP %q (the pages' own CSP on a page: %v)", path, h.Get("Content-Security-Policy"), !mount)
			}
		}
	}
}

// testLoginBrowser: in a real Chromium, a dashboard with a read token
// sends a page view to its login form; the token logs in and lands on the
// page asked for, whose figures and requests then work with the cookie;
// a page of another origin that frames the dashboard or a mount is
// refused by the browser.
func testLoginBrowser(t *testing.T, f *fixture) {
	mounted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<p id=mounted>fleet</p>") })
	srv, err := New(context.Background(), Config{Watch: f.cfg, Token: f.token, ReadToken: "r34d-token", Logf: t.Logf,
		Mounts: []Mount{{Prefix: "/fleet", Handler: mounted}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	b := newBrowser(t)
	page := ts.URL + "/jobs/" + f.jobID() + "/history?metric=work_ms"
	b.do("a page without the cookie", chromedp.Navigate(page), visible("input[name=token]"))
	b.shot("login")
	b.do("log in", chromedp.SendKeys(`input[name=token]`, "r34d-token"), chromedp.Submit(`input[name=token]`), visible("#historyfig svg"))
	if loc := run(b, "location", chromedp.Location()); loc != page {
		t.Errorf("after the login the browser is at %s, want %s", loc, page)
	}
	if n := b.count("#historyfig svg.history circle.pt"); n != 4 {
		t.Errorf("the history page after the login carries %d points, want 4", n)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("the history page after the login: console errors:\n%s", strings.Join(errs, "\n"))
	}
	b.page("fleet-after-login", ts.URL+"/fleet/x", "#mounted")

	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!DOCTYPE html><p id=host>another site</p><iframe src=%q></iframe><iframe src=%q></iframe>`, page, ts.URL+"/fleet/x")
	}))
	defer other.Close()
	b.do("another site frames the dashboard", chromedp.Navigate(other.URL), visible("#host"))
	errs := b.consoleErrors()
	refused := 0
	for _, e := range errs {
		if strings.Contains(e, "frame-ancestors") || strings.Contains(e, "X-Frame-Options") {
			refused++
		}
	}
	// Chromium names the framed origin only: two refusals for the two
	// frames.
	if refused != 2 {
		t.Errorf("another origin framed the page and the fleet's mount; the console says %q, want both refused", errs)
	}
}
