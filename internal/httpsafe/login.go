package httpsafe

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strings"
)

// LoginPath serves the login form of a server with a read token: a
// browser asked for the token once, which sets CookieName.
const LoginPath = "/login"

// LogoutPath ends a browser's login (POST): the cookie is cleared.
const LogoutPath = "/logout"

// CookieName is the cookie that stands for the read token in a browser:
// an HMAC of a fixed text under the token (so the cookie is not the token
// and changing the token ends every session), HttpOnly, SameSite=Lax.
const CookieName = "perfbot_read"

// gate asks every request for one of its tokens.
type gate struct {
	tokens [][]byte
	cookie []byte // the cookie's value, hex
	secure bool
}

func newGate(o Options) *gate {
	if o.ReadToken == "" {
		return nil
	}
	g := &gate{secure: o.Secure, cookie: []byte(cookieValue(o.ReadToken))}
	for _, t := range append([]string{o.ReadToken}, o.Tokens...) {
		if t != "" {
			g.tokens = append(g.tokens, []byte(t))
		}
	}
	return g
}

func cookieValue(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("perfbot serve read cookie"))
	return hex.EncodeToString(m.Sum(nil))
}

// known reports whether t is one of the gate's tokens, comparing each in
// constant time.
func (g *gate) known(t string) bool {
	ok := 0
	for _, want := range g.tokens {
		ok |= subtle.ConstantTimeCompare([]byte(t), want)
	}
	return ok == 1
}

// pass lets a request with a token (bearer or cookie) through, serves
// the login form, and answers the others: a browser's page view goes to
// the form, anything else gets a 401 with the bearer challenge.
func (g *gate) pass(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case LoginPath:
		g.login(w, r)
		return false
	case LogoutPath:
		g.logout(w, r)
		return false
	case "/favicon.ico":
		// A browser asks for it beside every page, the login form too.
		return true
	}
	if scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") && g.known(strings.TrimSpace(t)) {
		return true
	}
	if c, err := r.Cookie(CookieName); err == nil && hmac.Equal([]byte(c.Value), g.cookie) {
		return true
	}
	if r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html") {
		http.Redirect(w, r, LoginPath+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="perfbot"`)
	const msg = "this server needs its read token: send it as 'Authorization: Bearer <PERFBOT_READ_TOKEN>', or log in at " + LoginPath
	if strings.Contains(r.URL.Path, "/api/") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": msg, "status": http.StatusUnauthorized})
		return false
	}
	http.Error(w, msg, http.StatusUnauthorized)
	return false
}

var loginForm = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>perfbot: log in</title></head>
<body><h1>perfbot</h1>
<p>This dashboard needs its read token (PERFBOT_READ_TOKEN, or the write token PERFBOT_TOKEN).</p>
{{if .Wrong}}<p><strong>Wrong token.</strong></p>{{end}}
<form method="post" action="/login">
<input type="hidden" name="next" value="{{.Next}}">
<label>Token <input type="password" name="token" autocomplete="current-password" autofocus></label>
<button type="submit">Log in</button>
</form>
<form method="post" action="/logout"><button type="submit">Log out</button></form>
</body></html>
`))

// login serves the form (GET) and checks it (POST): the right token sets
// the cookie and goes on to the page asked for.
func (g *gate) login(w http.ResponseWriter, r *http.Request) {
	next := r.URL.Query().Get("next")
	wrong := false
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "the login form's body: "+err.Error(), http.StatusBadRequest)
			return
		}
		next = r.PostForm.Get("next")
		if g.known(r.PostForm.Get("token")) {
			http.SetCookie(w, &http.Cookie{Name: CookieName, Value: string(g.cookie), Path: "/",
				HttpOnly: true, Secure: g.secure, SameSite: http.SameSiteLaxMode})
			http.Redirect(w, r, localPath(next), http.StatusSeeOther)
			return
		}
		wrong = true
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "the login form takes GET and POST", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if wrong {
		w.WriteHeader(http.StatusForbidden)
	}
	_ = loginForm.Execute(w, struct {
		Next  string
		Wrong bool
	}{localPath(next), wrong})
}

// localPath is next if it is a path on this server, else "/": the form
// never sends a browser elsewhere. Browsers drop tabs and newlines from a
// URL and read a backslash as a slash, so "/\t/evil.example" would become
// "//evil.example": control characters and backslashes are refused, and
// what is left must parse as a path with no scheme and no host.
func localPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") ||
		strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return "/"
	}
	return next
}

// logout clears the cookie (POST only, so that no link or image of
// another page logs a user out) and goes to the login form.
func (g *gate) logout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "log out with POST "+LogoutPath, http.StatusMethodNotAllowed)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: g.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, LoginPath, http.StatusSeeOther)
}
