package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkBlob256MiB moves a 256 MiB artifact of random bytes through
// the fleet's database (the test's own PostgreSQL on this host): upload
// from a file (putBlobFile: hashing it, then one transaction of its
// chunks), download to a file (getBlobFile, checked as it streams), and
// GET /api/blobs/{sha} read whole and hashed by the client. The figures
// are in docs/fleet.md:
//
//	go test -run '^$' -bench Blob256MiB -benchtime 3x ./internal/fleet
func BenchmarkBlob256MiB(b *testing.B) {
	ctx := context.Background()
	pool := migratedPool(b)
	const size = 256 << 20
	dir := b.TempDir()
	path := filepath.Join(dir, "vmlinux")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.NewChaCha8([32]byte{9}), size); err != nil {
		b.Fatal(err)
	}
	f.Close()
	var h string
	b.Run("upload", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if h != "" {
				b.StopTimer()
				if err := deleteBlob(ctx, pool, h); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			if h, err = putBlobFile(ctx, pool, path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("download", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if err := getBlobFile(ctx, pool, h, filepath.Join(dir, "out")); err != nil {
				b.Fatal(err)
			}
		}
	})
	srv := httptest.NewServer((&Server{cfg: ServerConfig{Pool: pool}}).Handler())
	defer srv.Close()
	b.Run("http", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			resp, err := http.Get(srv.URL + "/api/blobs/" + h)
			if err != nil {
				b.Fatal(err)
			}
			sum := sha256.New()
			n, err := io.Copy(sum, resp.Body)
			resp.Body.Close()
			if err != nil || n != size || hex.EncodeToString(sum.Sum(nil)) != h {
				b.Fatalf("GET: %d bytes, %v", n, err)
			}
		}
	})
}
