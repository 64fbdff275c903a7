package httpsafe

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// openFDs counts the test process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd to count descriptors: %v", err)
	}
	return len(fds)
}

// serve starts NewServer(h, to) on a free loopback port and returns its
// address and a count of the connections it closed.
func serve(t *testing.T, h http.Handler, to Timeouts) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := NewServer(h, to)
	var closed atomic.Int64
	hs.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed.Add(1)
		}
	}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return l.Addr().String(), &closed
}

// awaitClose reads c until the server closes it and returns how long
// that took; it fails when c is still open after limit.
func awaitClose(t *testing.T, c net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("the connection was still open after %v", limit)
	}
	return time.Since(start)
}

// TestSlowlorisClosed: with real TCP clients on loopback, 50 POSTs that
// send their headers and 10 bytes of a 100-byte body, then stall, are
// all closed within the read timeout (1 s here, 30 s by default), and
// the server's descriptors with them; a request line that never ends is
// closed at the header timeout; an idle keep-alive connection at the
// idle timeout; and a normal request still works, twice over one kept
// connection.
func TestSlowlorisClosed(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	to := Timeouts{ReadHeader: 500 * time.Millisecond, Read: time.Second, Write: 2 * time.Second, Idle: time.Second}
	addr, closed := serve(t, h, to)
	before := openFDs(t)

	const n = 50
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /state HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n0123456789", addr)
		conns[i] = c
	}
	held := openFDs(t)
	var wg sync.WaitGroup
	var slowest atomic.Int64
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d := awaitClose(t, c, to.Read+3*time.Second); int64(d) > slowest.Load() {
				slowest.Store(int64(d))
			}
		}()
	}
	wg.Wait()
	for deadline := time.Now().Add(5 * time.Second); closed.Load() < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if closed.Load() < n {
		t.Errorf("the server closed %d of %d stalled connections", closed.Load(), n)
	}
	for _, c := range conns {
		c.Close()
	}
	after := openFDs(t)
	t.Logf("descriptors: %d before, %d with %d stalled bodies (both ends), %d after; the slowest closed after %v",
		before, held, n, after, time.Duration(slowest.Load()).Round(time.Millisecond))
	if after > before+2 {
		t.Errorf("descriptors: %d before, %d after the stalled connections were closed", before, after)
	}

	// Headers that never end.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n", addr)
	if d := awaitClose(t, c, to.ReadHeader+3*time.Second); d < to.ReadHeader/2 {
		t.Errorf("stalled headers closed after %v, before the header timeout %v", d, to.ReadHeader)
	}

	// A normal request, twice on one connection, then left idle.
	c, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := range 2 {
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: 2\r\n\r\n{}", addr)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on a kept connection: %v", i+1, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != "ok" {
			t.Errorf("request %d: %d %q", i+1, resp.StatusCode, b)
		}
	}
	start := time.Now()
	c.SetReadDeadline(start.Add(to.Idle + 3*time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("an idle keep-alive connection: %v after %v, want it closed (EOF) at the idle timeout %v", err, time.Since(start), to.Idle)
	} else if d := time.Since(start); d < to.Idle/2 {
		t.Errorf("an idle connection was closed after %v, before the idle timeout %v", d, to.Idle)
	}
}

// TestDefaults: a zero Timeouts takes the defaults, and every bound is
// set.
func TestDefaults(t *testing.T) {
	hs := NewServer(http.NotFoundHandler(), Timeouts{})
	if hs.ReadHeaderTimeout != DefaultReadHeader || hs.ReadTimeout != DefaultRead || hs.WriteTimeout != DefaultWrite || hs.IdleTimeout != DefaultIdle || hs.MaxHeaderBytes == 0 {
		t.Errorf("NewServer's timeouts: %v %v %v %v, headers %d", hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout, hs.MaxHeaderBytes)
	}
}
