package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/testutil"
)

// TestServeFleet: perfbot serve --db is the dashboard and the fleet's
// server in one: the fleet's API under /fleet/api/ (its writes need the
// token, as the dashboard's do), River's UI under /riverui/, and the
// pages over the fleet's database.
func TestServeFleet(t *testing.T) {
	db := testutil.Postgres(t)
	t.Setenv("PERFBOT_TOKEN", "s3cret")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, &stdout, &stderr, []string{"serve", "--db", db, "--class", "ci", "--dir", filepath.Join(t.TempDir(), "server"), "--addr", "127.0.0.1:0"})
	}()
	defer func() {
		cancel()
		select {
		case code := <-done:
			if code != exitOK {
				t.Errorf("exit %d after the context ended, stderr %q", code, stderr.String())
			}
		case <-time.After(20 * time.Second):
			t.Error("perfbot serve --db did not stop when its context ended")
		}
	}()
	addr := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)/`)
	var url string
	for deadline := time.Now().Add(60 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("perfbot serve --db did not say where it listens: %q", stderr.String())
	}
	if !strings.Contains(stderr.String(), "fleet server over") || strings.Contains(stderr.String(), "s3cret") {
		t.Errorf("stderr %q: want the fleet server announced, and no token", stderr.String())
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/fleet/api/machines"); code != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("GET /fleet/api/machines: %d %q, want 200 and no machines", code, body)
	}
	if code, body := get("/api/jobs"); code != 200 {
		t.Errorf("GET /api/jobs (the dashboard's, over the fleet's store): %d %q", code, body)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, "<html") {
		t.Errorf("GET / : %d, %.200q", code, body)
	}
	if code, _ := get(strings.TrimSuffix("/riverui/", "/") + "/"); code != 200 {
		t.Errorf("GET /riverui/: %d, want River's UI", code)
	}
	// Every mount sends the security headers, and none answers a
	// foreign Host (DNS rebinding would read the job files of
	// /fleet/api/jobs).
	for _, path := range []string{"/", "/api/jobs", "/fleet/api/machines", "/fleet/api/jobs", "/riverui/", "/riverui/api/jobs"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" || h.Get("Cross-Origin-Resource-Policy") != "same-origin" {
			t.Errorf("GET %s: %d, headers %v; want the security headers", path, resp.StatusCode, h)
		}
		req, _ := http.NewRequest("GET", url+path, nil)
		req.Host = "attacker.example:" + url[strings.LastIndex(url, ":")+1:]
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("GET %s with Host %s: %d, want 421", path, req.Host, resp.StatusCode)
		}
	}
	post := func(token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", url+"/fleet/api/compare", strings.NewReader(`{}`))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(""); code != http.StatusUnauthorized {
		t.Errorf("POST /fleet/api/compare without the token: %d %q, want 401", code, body)
	}
	if code, body := post("wrong"); code != http.StatusForbidden {
		t.Errorf("POST /fleet/api/compare with a wrong token: %d %q, want 403", code, body)
	}
	// With the token the fleet itself judges the request: an empty
	// comparison is bad input, answered as such.
	code, body := post("s3cret")
	var msg map[string]any
	if code != http.StatusBadRequest || json.Unmarshal([]byte(body), &msg) != nil {
		t.Errorf("POST /fleet/api/compare {} with the token: %d %q, want 400 with a JSON message", code, body)
	}
}
