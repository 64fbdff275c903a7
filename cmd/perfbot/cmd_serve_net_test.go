package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// syntheticStore is a store with a synthetic history of the job
// "synthetic" over commits tested commits.
func syntheticStore(t *testing.T, commits int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".perfbot")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	testutil.SyntheticHistory(t, st, testutil.HistorySpec{Job: "0123456789abcdef", Commits: commits, PerCycle: 4,
		Level: func(int) float64 { return 1 }})
	st.Close()
	return dir
}

// serveProcess starts the perfbot binary bin as `perfbot serve args...`
// with the environment env added, waits for it to say where it listens,
// and returns its URL and process; the process gets SIGTERM at the
// test's end.
func serveProcess(t *testing.T, bin string, env []string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Errorf("perfbot serve did not stop within 15 s of SIGTERM")
		}
	})
	addr := regexp.MustCompile(`serving (https?://[^/ ]+)/`)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], cmd
		}
		select {
		case <-exited:
			t.Fatalf("perfbot serve exited: %s", stderr.String())
		default:
		}
	}
	t.Fatalf("perfbot serve did not say where it listens: %q", stderr.String())
	return "", nil
}

// fds counts the open descriptors of process pid.
func fds(t *testing.T, pid int) int {
	t.Helper()
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("counting the server's descriptors: %v", err)
	}
	return len(es)
}

// TestServeProcessTimeouts: the perfbot binary, serving a store on
// loopback with its default timeouts, holds 100 POSTs that stall after
// their headers only until its read timeout (30 s): its descriptors go
// up by 100 and come back; a normal request is answered meanwhile; a
// foreign Host (DNS rebinding) is refused with 421 and the headers every
// answer carries.
func TestServeProcessTimeouts(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 30 s read timeout")
	}
	bin := buildPerfbot(t)
	url, cmd := serveProcess(t, bin, nil, "--store", syntheticStore(t, 6), "--addr", "127.0.0.1:0")
	host := strings.TrimPrefix(url, "http://")
	_, port, _ := net.SplitHostPort(host)
	before := fds(t, cmd.Process.Pid)
	const n = 100
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /api/findings/abc/state HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", host)
		conns = append(conns, c)
	}
	start := time.Now()
	var held int
	for deadline := time.Now().Add(5 * time.Second); held < before+n && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		held = fds(t, cmd.Process.Pid)
	}

	req, _ := http.NewRequest("GET", url+"/api/jobs", nil)
	req.Host = "attacker.example:" + port
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(string(body), "synthetic") || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("GET /api/jobs with Host attacker.example: %d %q %v; want 421 and no data", resp.StatusCode, body, resp.Header)
	}
	if resp, err := http.Get(url + "/api/jobs"); err != nil || resp.StatusCode != 200 {
		t.Errorf("a normal request beside the stalled ones: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// The server closes them at its read timeout: each client sees EOF.
	for _, c := range conns {
		c.SetReadDeadline(start.Add(45 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("a stalled POST was still open after %v: %v", time.Since(start).Round(time.Second), err)
		}
	}
	closedAfter := time.Since(start)
	var after int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if after = fds(t, cmd.Process.Pid); after <= before+1 {
			break
		}
	}
	t.Logf("the server's descriptors: %d before, %d with %d stalled POSTs, %d after they were closed at %v", before, held, n, after, closedAfter.Round(100*time.Millisecond))
	if held < before+n {
		t.Errorf("the server held %d descriptors with %d connections open, from %d: the count does not see them", held, n, before)
	}
	if after > before+1 {
		t.Errorf("the server's descriptors: %d before, %d after the stalled POSTs were closed", before, after)
	}
}

// TestServeNetworkBind: an address that is not loopback is refused
// without a read token and TLS, and served with both: over HTTPS with
// the generated certificate, reads need the token, a plain HTTP client
// gets no data.
func TestServeNetworkBind(t *testing.T) {
	bin := buildPerfbot(t)
	dir := syntheticStore(t, 6)
	out, err := exec.Command(bin, "serve", "--store", dir, "--addr", "0.0.0.0:0").CombinedOutput()
	if code := exitCode(err); code != exitError || !strings.Contains(string(out), "not a loopback address") || !strings.Contains(string(out), "--insecure") {
		t.Errorf("serve --addr 0.0.0.0:0 with no token and no TLS: exit %d, %q; want exit 2 naming --insecure", code, out)
	}
	ca := testutil.NewTestCA(t)
	cert, key, pool := ca.CertFile, ca.KeyFile, ca.Pool
	url, _ := serveProcess(t, bin, []string{"PERFBOT_READ_TOKEN=r34d"}, "--store", dir, "--addr", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("serve with --tls-cert says %s, want https://", url)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(url, "https://"))
	local := "https://127.0.0.1:" + port
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(c *http.Client, u, token string) (int, string, error) {
		req, _ := http.NewRequest("GET", u, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	if code, body, err := get(client, local+"/api/jobs", "r34d"); code != 200 || !strings.Contains(body, "synthetic") {
		t.Errorf("GET /api/jobs over HTTPS with the read token: %d %.200q %v", code, body, err)
	}
	if code, body, err := get(client, local+"/api/jobs", ""); code != 401 || strings.Contains(body, "synthetic") {
		t.Errorf("GET /api/jobs over HTTPS without the token: %d %.200q %v", code, body, err)
	}
	if code, body, err := get(http.DefaultClient, "http://127.0.0.1:"+port+"/api/jobs", "r34d"); code == 200 || strings.Contains(body, "synthetic") {
		t.Errorf("plain HTTP to the HTTPS server: %d %.200q %v", code, body, err)
	}
	if _, _, err := get(http.DefaultClient, local+"/api/jobs", "r34d"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client that does not trust the certificate: %v, want a certificate error", err)
	}
	// --insecure goes on, with the warning (to the next error: a store
	// that is not there).
	if out, err := exec.Command(bin, "serve", "--store", filepath.Join(t.TempDir(), "none"), "--addr", "0.0.0.0:0", "--insecure").CombinedOutput(); !strings.Contains(string(out), "warning: --insecure: ") || !strings.Contains(string(out), "no perfbot results store there") {
		t.Errorf("--insecure: %s %v; want the warning, then the store's error", out, err)
	}
}

// exitCode is the exit status in err (0 for nil).
func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestServeDBErrors: perfbot serve --db over a database that is not
// there, or as a role that is not, prints the database's error with no
// password in it and exits 2 (it once panicked).
func TestServeDBErrors(t *testing.T) {
	bin := buildPerfbot(t)
	db := testutil.Postgres(t)
	missing := regexp.MustCompile(`/[^/?]+\?`).ReplaceAllString(db, "/no_such_database?") + "&sslpassword=k3ys3cret"
	role := strings.Replace(db, "postgres://perfbot@", "postgres://nobody:hunt3r2@", 1)
	for _, tc := range []struct{ url, want string }{
		{missing, `database "no_such_database" does not exist`},
		{role, `role "nobody" does not exist`},
	} {
		cmd := exec.Command(bin, "serve", "--db", tc.url, "--dir", t.TempDir(), "--addr", "127.0.0.1:0")
		out, err := cmd.CombinedOutput()
		if code := exitCode(err); code != exitError || !strings.Contains(string(out), tc.want) ||
			strings.Contains(string(out), "panic") || strings.Contains(string(out), "hunt3r2") || strings.Contains(string(out), "k3ys3cret") {
			t.Errorf("serve --db %s: exit %d, output %q; want exit 2, %q and no password", store.RedactURL(tc.url), code, out, tc.want)
		}
	}
}
