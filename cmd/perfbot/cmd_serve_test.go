package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
)

// lockedBuffer is a bytes.Buffer that a running command writes and a
// test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServe runs perfbot serve over a store (a synthetic watch history)
// on a free loopback port: it says where it listens, serves the API, and
// stops cleanly when its context ends.
func TestServe(t *testing.T) {
	dir := syntheticStore(t, 12)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, &stdout, &stderr, []string{"serve", "--store", dir, "--addr", "127.0.0.1:0"}) }()
	addr := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)/ \(read-only`)
	var url string
	for deadline := time.Now().Add(30 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("perfbot serve did not say where it listens: %q", stderr.String())
	}
	resp, err := http.Get(url + "/api/jobs")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Version int
		Jobs    []struct {
			Name      string
			Histories []struct{ Tested int }
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	jobs := list.Jobs
	resp.Body.Close()
	if err != nil || len(jobs) != 1 || jobs[0].Name != "synthetic" || len(jobs[0].Histories) != 1 || jobs[0].Histories[0].Tested != 12 {
		t.Errorf("GET /api/jobs: %+v, %v", jobs, err)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after the context ended, stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("perfbot serve did not stop when its context ended")
	}
}

// TestServeBadInput: what serve cannot serve is an error naming it.
func TestServeBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "give a watch file, --store DIR or --db URL"},
		{[]string{"serve", "--store", filepath.Join(t.TempDir(), "none")}, "no perfbot results store there"},
		{[]string{"serve", filepath.Join(t.TempDir(), "watch.yaml")}, "watch.yaml"},
		// The address is checked first: a network bind is refused before
		// any store or database is opened.
		{[]string{"serve", "--store", t.TempDir(), "--addr", "127.0.0.1:99999"}, "--addr 127.0.0.1:99999"},
		{[]string{"serve", "--store", t.TempDir(), "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
	} {
		code, _, errOut := runPerfbot(tc.args...)
		if code != exitError || !strings.Contains(errOut, tc.want) {
			t.Errorf("perfbot %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
	// A bad address, with a store to serve.
	dir := filepath.Join(t.TempDir(), ".perfbot")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if code, _, errOut := runPerfbot("serve", "--store", dir, "--addr", "127.0.0.1:99999"); code != exitError || !strings.Contains(errOut, "--addr 127.0.0.1:99999") {
		t.Errorf("a bad address: exit %d, stderr %q", code, errOut)
	}
}
