package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/fleet"
)

// TestServerAPI: the fleet's API queues a comparison, lists it and the
// machines, refuses bad requests with a message, and River's UI is served
// beside it.
func TestServerAPI(t *testing.T) {
	f := newFixture(t, 3, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ui, err := f.server.RiverUI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", f.server.Handler())
	mux.Handle(fleet.RiverUIPrefix+"/", ui)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	body, _ := json.Marshal(fleet.CompareArgs{Job: f.spec, Class: "test", Commits: f.commits})
	resp, err := http.Post(srv.URL+"/api/compare", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var row struct {
		ID   int64  `json:"id"`
		Kind string `json:"kind"`
	}
	json.NewDecoder(resp.Body).Decode(&row)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || row.Kind != "perfbot.compare" || row.ID == 0 {
		t.Fatalf("POST /api/compare: %s, job %+v", resp.Status, row)
	}
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := get("/api/jobs"); code != 200 || !strings.Contains(b, `"perfbot.compare"`) {
		t.Errorf("GET /api/jobs: %d %s", code, b)
	}
	if code, b := get("/api/machines"); code != 200 || strings.TrimSpace(b) != "[]" {
		t.Errorf("GET /api/machines without workers: %d %s", code, b)
	}
	bad, _ := json.Marshal(fleet.CompareArgs{Job: f.spec, Class: "Bad Class", Commits: f.commits})
	resp, err = http.Post(srv.URL+"/api/compare", "application/json", bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `class \"Bad Class\"`) {
		t.Errorf("a bad class: %s %s", resp.Status, b)
	}
	// Unknown fields and oversized bodies are refused, as the dashboard's
	// API refuses them.
	for _, body := range []string{`{"job": {}, "class": "test", "commitz": ["a", "b"]}`, `{"class": "` + strings.Repeat("x", 2<<20) + `"}`} {
		resp, err = http.Post(srv.URL+"/api/compare", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "request body") {
			t.Errorf("POST %.40s...: %s %.200s", body, resp.Status, b)
		}
	}
	if code, b := get("/api/jobs/999999"); code != http.StatusNotFound {
		t.Errorf("GET an unknown job: %d %s", code, b)
	}
	if code, b := get(fleet.RiverUIPrefix + "/"); code != 200 || !strings.Contains(b, "<html") {
		t.Errorf("GET %s/: %d %.200s", fleet.RiverUIPrefix, code, b)
	}
	// By its id: the server's own client may already work the comparison,
	// so the job's state (available, running, retryable) is not fixed.
	if code, b := get(fmt.Sprintf("%s/api/jobs/%d", fleet.RiverUIPrefix, row.ID)); code != 200 || !strings.Contains(b, "perfbot.compare") {
		t.Errorf("River's UI API: %d %.300s", code, b)
	}
}
