package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

// TestBlobStreamed: a blob is served from the database a chunk at a time:
// a 48 MiB blob (48 chunks) arrives whole and matches its hash while the
// server's heap stays within a few chunks of where it was (reading it
// whole, as it once did, takes at least the blob's size twice: pgx's
// buffer and the copy); a range is served; a second GET with the ETag is
// 304; a blob whose bytes no longer match its hash never arrives whole;
// an unknown hash is 404.
func TestBlobStreamed(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	const size = 48 << 20
	data := make([]byte, size)
	r := rand.NewChaCha8([32]byte{7})
	r.Read(data)
	h, err := putBlob(ctx, pool, data)
	if err != nil {
		t.Fatal(err)
	}
	around := bytes.Clone(data[blobChunk-10 : blobChunk+10])
	data = nil
	srv := httptest.NewServer((&Server{cfg: ServerConfig{Pool: pool}}).Handler())
	defer srv.Close()
	url := srv.URL + "/api/blobs/" + h

	// A low GC target, so that the heap measures what is held, not the
	// garbage of the chunks already sent.
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	start := time.Now()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.New()
	n, err := io.Copy(sum, resp.Body)
	resp.Body.Close()
	close(stop)
	<-sampled
	if err != nil || n != size || hex.EncodeToString(sum.Sum(nil)) != h || resp.StatusCode != 200 {
		t.Fatalf("GET the blob: %d, %d bytes, %v; want 200, %d bytes matching %s", resp.StatusCode, n, err, size, h)
	}
	if got := resp.Header.Get("Content-Length"); got != fmt.Sprint(size) {
		t.Errorf("Content-Length %q, want %d", got, size)
	}
	grew := int64(peak.Load()) - int64(before.HeapAlloc)
	t.Logf("heap before %d MiB, peak while serving %d MiB (+%d MiB) for a %d MiB blob, served in %v", before.HeapAlloc>>20, peak.Load()>>20, grew>>20, size>>20, time.Since(start).Round(time.Millisecond))
	if grew > size/2 {
		t.Errorf("serving a %d MiB blob grew the heap by %d MiB: it is not streamed", size>>20, grew>>20)
	}

	// A range across a chunk boundary.
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", blobChunk-10, blobChunk+9))
	part := get(t, req, http.StatusPartialContent)
	if len(part) != 20 {
		t.Errorf("a 20-byte range: got %d bytes", len(part))
	}
	if !bytes.Equal(part, around) {
		t.Errorf("the range's bytes differ from the blob's")
	}
	req, _ = http.NewRequest("GET", url, nil)
	req.Header.Set("If-None-Match", `"`+h+`"`)
	get(t, req, http.StatusNotModified)
	req, _ = http.NewRequest("GET", srv.URL+"/api/blobs/"+hex.EncodeToString(make([]byte, 32)), nil)
	get(t, req, http.StatusNotFound)

	// A blob whose bytes changed under its hash: the answer is cut short.
	if _, err := pool.Exec(ctx, `UPDATE perfbot_fleet_blob_chunks SET data = set_byte(data, 4, (get_byte(data, 4) + 1) % 256) WHERE sha256 = $1 AND idx = 40`, h); err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	n, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) || n >= size {
		t.Errorf("a blob that does not match its hash: read %d of %d bytes, error %v; want it cut short", n, size, err)
	}
}

// get does req and wants code; it returns the body.
func get(t *testing.T, req *http.Request, code int) []byte {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != code {
		t.Errorf("%s %s: %d %.200q %v, want %d", req.Method, req.URL, resp.StatusCode, b, err, code)
	}
	return b
}
