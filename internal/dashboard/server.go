// Package dashboard is perfbot's web dashboard (perfbot serve): pages
// rendered on the server over the results stores that perfbot watch
// writes (an overview, each metric's history with its layout beside it,
// each finding with its evidence drawn, comparisons of stored runs), the
// JSON API behind every page, and the writes a person may make with the
// server's token (a finding's state) or ask for (a comparison, bisection,
// triage or watch cycle, enqueued on the fleet's queue through Enqueuer,
// never run inside the server). Every asset is embedded: it works with no
// network. docs/dashboard.md documents the pages and the API.
package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/perfbot/perfbot/internal/httpsafe"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/watch"
)

// Config says what a Server serves.
type Config struct {
	// Watch is the watch file whose jobs' stores are served (their
	// policies, branches and job files come from it); may be nil.
	Watch *watch.Config
	// Stores are more results store folders (.perfbot) to serve, with
	// every job they hold.
	Stores []string
	// Open are stores the caller opened (the fleet's PostgreSQL store,
	// store.OpenURL), served with every job they hold; the caller closes
	// them.
	Open []*store.Store
	// DB is the URL of the database store among Open (perfbot serve
	// --db): the commands shown for its jobs submit to it (without its
	// password).
	DB string
	// Token, when set, allows writes to whoever sends it as a bearer token
	// (PERFBOT_TOKEN); without it the server is read-only.
	Token string
	// Queue enqueues the actions a page asks for (the fleet's River
	// queue); nil shows the command that does it instead.
	Queue Enqueuer
	// Mounts are other handlers served beside the pages (perfbot serve
	// --db mounts the fleet's API and River's UI); their writes need the
	// token as the pages' do.
	Mounts []Mount
	// Hosts are the Host names the server answers (httpsafe.Options);
	// empty answers any. perfbot serve sets them on a loopback bind.
	Hosts []string
	// ReadToken, when set, is needed for every read (PERFBOT_READ_TOKEN):
	// as a bearer token or the cookie of the login form; Token allows
	// reads too.
	ReadToken string
	// Secure: the server speaks HTTPS (the login cookie is Secure).
	Secure bool
	// Logf receives the server's diagnostics (the stack of a failure that
	// a page only names); may be nil.
	Logf func(format string, args ...any)
}

// Server serves the dashboard. Its handler is safe for concurrent use.
type Server struct {
	cfg   Config
	cat   *catalog
	mux   *http.ServeMux
	pages *pages

	mu      sync.Mutex
	layouts map[string]*layoutEntry // layout diffs of findings, by store and culprit
}

// New reads the watch file's jobs and the stores (every store named must
// exist) and returns the server.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Watch == nil && len(cfg.Stores) == 0 && len(cfg.Open) == 0 {
		return nil, fmt.Errorf("dashboard: nothing to serve: give a watch file or a results store")
	}
	cat, err := newCatalog(ctx, cfg.Watch, cfg.Stores, cfg.Open)
	if err != nil {
		return nil, err
	}
	p, err := newPages()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, cat: cat, pages: p, layouts: map[string]*layoutEntry{}}
	s.routes()
	return s, nil
}

// Close closes the stores.
func (s *Server) Close() error { return s.cat.close() }

// Handler is the dashboard's HTTP handler: the pages, the API and the
// mounts, every one behind httpsafe's headers, Host check and read token.
func (s *Server) Handler() http.Handler {
	var h http.Handler = s.recoverer(s.headers(s.mux))
	if len(s.cfg.Mounts) > 0 {
		top := http.NewServeMux()
		for _, m := range s.cfg.Mounts {
			top.Handle(strings.TrimSuffix(m.Prefix, "/")+"/", s.recoverer(s.guard(m.Handler)))
		}
		top.Handle("/", h)
		h = top
	}
	return httpsafe.Handler(httpsafe.Options{Hosts: s.cfg.Hosts, ReadToken: s.cfg.ReadToken,
		Tokens: []string{s.cfg.Token}, Secure: s.cfg.Secure}, h)
}

// Mount is a handler served under Prefix beside the dashboard's pages.
type Mount struct {
	Prefix  string // "/fleet", "/riverui"
	Handler http.Handler
}

// guard lets a mounted handler's reads through and asks its writes (any
// method but GET, HEAD and OPTIONS) for the token.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if !s.allowed(w, r) {
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// Warm builds every job's histories once, so that the first visit of a
// long history does not wait for its comparisons (history.Memo); it
// returns when done or when ctx ends. perfbot serve runs it in the
// background.
func (s *Server) Warm(ctx context.Context) {
	for _, je := range s.cat.snapshot() {
		for _, v := range s.cat.variants(ctx, je) {
			for _, b := range s.cat.branches(ctx, je, v) {
				if ctx.Err() != nil {
					return
				}
				metrics := s.cat.metrics(ctx, je)
				if len(metrics) == 0 {
					continue
				}
				if _, err := s.cat.series(ctx, je, v, b, metrics[0].Name); err != nil {
					s.logf("warming the history of %s (%s, %s): %v", je.Name, variantLabel(v), b, err)
				}
			}
		}
	}
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.Handle("GET /static/", staticHandler())
	// Browsers ask for it beside a figure opened on its own: no icon.
	m.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	m.HandleFunc("GET /{$}", s.page(s.overviewPage))
	m.HandleFunc("GET /jobs/{job}/history", s.page(s.historyPage))
	m.HandleFunc("GET /jobs/{job}/history.svg", s.svg(s.historySVG))
	m.HandleFunc("GET /findings/{culprit}", s.page(s.findingPage))
	m.HandleFunc("GET /compare", s.page(s.comparePage))
	m.HandleFunc("GET /cycles", s.page(s.cyclesPage)) // cycles.go

	m.HandleFunc("GET /api/overview", s.api(s.overviewAPI))
	m.HandleFunc("GET /api/jobs", s.api(s.jobsAPI))
	m.HandleFunc("GET /api/jobs/{job}/history", s.api(s.historyAPI))
	m.HandleFunc("GET /api/findings", s.api(s.findingsAPI))
	m.HandleFunc("GET /api/findings/{culprit}", s.api(s.findingAPI))
	m.HandleFunc("GET /api/compare", s.api(s.compareAPI))
	m.HandleFunc("GET /api/cycles", s.api(s.cyclesAPI))
	m.HandleFunc("POST /api/findings/{culprit}/state", s.write(s.setStateAPI))
	m.HandleFunc("POST /api/actions", s.write(s.actionAPI))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, errorf(http.StatusNotFound, "no page %s %s here (see docs/dashboard.md for the pages and the API)", r.Method, r.URL.Path))
	})
	s.mux = m
}

// headers sets the pages' Content-Security-Policy over httpsafe's: no
// script, style or image from anywhere but the server itself, no
// framing.
func (s *Server) headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
		h.ServeHTTP(w, r)
	})
}

// recoverer turns a panic into a 500 that names it, without the stack
// (which goes to the server's log).
func (s *Server) recoverer(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.logf("%s %s: panic: %v\n%s", r.Method, r.URL, v, debug.Stack())
				s.fail(w, r, errorf(http.StatusInternalServerError, "internal error: %v (the server's log has the details)", v))
			}
		}()
		h.ServeHTTP(w, r)
	})
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// timeout bounds the work of one request.
const timeout = 2 * time.Minute
