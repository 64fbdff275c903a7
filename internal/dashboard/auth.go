package dashboard

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// maxBody is the largest request body a write reads.
const maxBody = 64 << 10

// write adapts an endpoint that changes something: it needs the server's
// token as a bearer token (401 without one, 403 with a wrong one, 403 on
// a read-only server) and a JSON body.
func (s *Server) write(do func(*http.Request) (int, any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.allowed(w, r) {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		code, v, err := do(r.WithContext(ctx))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, code, v)
	}
}

// allowed checks a write's token and, when it is refused, answers it (a
// 401 carries the bearer challenge); it reports whether the write may go
// on.
func (s *Server) allowed(w http.ResponseWriter, r *http.Request) bool {
	err := s.authorize(r)
	if err == nil {
		return true
	}
	if err.code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="perfbot"`)
	}
	s.fail(w, r, err)
	return false
}

// authorize checks the request's bearer token against the server's.
func (s *Server) authorize(r *http.Request) *httpError {
	if s.cfg.Token == "" {
		return errorf(http.StatusForbidden, "this dashboard is read-only: start perfbot serve with PERFBOT_TOKEN set to allow changes")
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return errorf(http.StatusUnauthorized, "a change needs the dashboard's token: send it as 'Authorization: Bearer <PERFBOT_TOKEN>'")
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return errorf(http.StatusUnauthorized, "the Authorization header is not a bearer token ('Authorization: Bearer <PERFBOT_TOKEN>')")
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(s.cfg.Token)) != 1 {
		return errorf(http.StatusForbidden, "wrong token")
	}
	return nil
}

// decode reads a write's JSON body into v; unknown fields are errors.
func decode(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return errorf(http.StatusUnsupportedMediaType, "the body must be JSON (Content-Type: application/json), not %s", ct)
	}
	d := json.NewDecoder(r.Body)
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			return errorf(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", maxBody)
		case errors.Is(err, io.EOF):
			return errorf(http.StatusBadRequest, "the body is empty: want a JSON object")
		}
		return errorf(http.StatusBadRequest, "the body is not the JSON this endpoint takes: %v", err)
	}
	if d.More() {
		return errorf(http.StatusBadRequest, "the body holds more than one JSON value")
	}
	return nil
}

// badParam is a 400 naming a parameter, its value and what it wants.
func badParam(name, value, want string) *httpError {
	return errorf(http.StatusBadRequest, "parameter %s=%q: %s", name, value, want)
}
