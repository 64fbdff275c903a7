package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/store"
)

// TestGuardAnswers: the token guard of a mounted handler (the fleet's API
// under /fleet/api/) answers an API path in JSON, as the dashboard's API
// does, and other paths with the error page; reads and authorized writes
// reach the handler.
func TestGuardAnswers(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reached := 0
	mounted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ })
	srv, err := New(context.Background(), Config{Open: []*store.Store{st}, Token: "tok",
		Mounts: []Mount{{Prefix: "/fleet", Handler: mounted}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, tt := range []struct {
		method, path, token string
		code                int
		json                bool
	}{
		{"POST", "/fleet/api/machines", "", http.StatusUnauthorized, true},
		{"POST", "/fleet/api/machines", "wrong", http.StatusForbidden, true},
		{"POST", "/fleet/other", "", http.StatusUnauthorized, false},
		{"POST", "/fleet/api/machines", "tok", http.StatusOK, false},
		{"GET", "/fleet/api/machines", "", http.StatusOK, false},
	} {
		req := httptest.NewRequest(tt.method, tt.path, nil)
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		var e struct {
			Error  string
			Status int
		}
		isJSON := strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && json.Unmarshal(w.Body.Bytes(), &e) == nil && e.Status == tt.code && e.Error != ""
		if w.Code != tt.code || isJSON != tt.json {
			t.Errorf("%s %s (token %q): %d %s %s, want %d (JSON: %v)", tt.method, tt.path, tt.token, w.Code, w.Header().Get("Content-Type"), w.Body, tt.code, tt.json)
		}
	}
	if reached != 2 {
		t.Errorf("the mounted handler was reached %d times, want 2", reached)
	}
}
