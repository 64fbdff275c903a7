package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/perfbot/perfbot/internal/store"
)

// httpError is an answer other than success: its status and a message
// that says what is wrong and where.
type httpError struct {
	code int
	msg  string
	// command, for an action the server cannot enqueue: what to run.
	command string
}

func (e *httpError) Error() string { return e.msg }

func errorf(code int, format string, args ...any) *httpError {
	return &httpError{code: code, msg: fmt.Sprintf(format, args...)}
}

// status is the HTTP status of err: its own, 404 for what the store does
// not hold, 503 when the request ran out of time, else 500.
func status(err error) (int, string) {
	var he *httpError
	switch {
	case errors.As(err, &he):
		return he.code, he.msg
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound, err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "the request took too long: " + err.Error()
	}
	return http.StatusInternalServerError, "internal error: " + err.Error()
}

// fail answers with err: JSON for an API path (the dashboard's /api/, a
// mounted handler's such as /fleet/api/), else the error page.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := status(err)
	if code >= 500 {
		s.logf("%s %s: %v", r.Method, r.URL, err)
	}
	if isAPI(r.URL.Path) {
		body := map[string]any{"error": msg, "status": code}
		var he *httpError
		if errors.As(err, &he) && he.command != "" {
			body["command"] = he.command
		}
		writeJSON(w, code, body)
		return
	}
	var b bytes.Buffer
	if e := s.pages.render(&b, "error", errorView{Status: code, Title: http.StatusText(code), Message: msg}); e != nil {
		http.Error(w, msg, code)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

type errorView struct {
	Status         int
	Title, Message string
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code, data = http.StatusInternalServerError, []byte(fmt.Sprintf(`{"error": %q, "status": 500}`, "encoding the answer: "+err.Error()))
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}

// page adapts a page: it builds the page's data and renders its template
// whole before writing, so a failure is an error page, never half a page.
func (s *Server) page(build func(*http.Request) (string, any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		r = r.WithContext(ctx)
		name, data, err := build(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		var b bytes.Buffer
		if err := s.pages.render(&b, name, data); err != nil {
			s.fail(w, r, fmt.Errorf("rendering the %s page: %w", name, err))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b.Bytes())
	}
}

// api adapts a JSON endpoint.
func (s *Server) api(build func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		v, err := build(r.WithContext(ctx))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// svg adapts an endpoint that answers with a figure.
func (s *Server) svg(build func(*http.Request) ([]byte, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		data, err := build(r.WithContext(ctx))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		// A figure opened on its own applies its own stylesheet.
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(data)
	}
}

// isAPI reports whether path is an API's: /api/ or, under a mount, any
// folder named api.
func isAPI(path string) bool {
	return strings.HasPrefix(path, "/api/") || strings.Contains(path, "/api/")
}
