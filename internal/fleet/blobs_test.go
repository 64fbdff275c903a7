package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// randomFile writes size bytes of seeded noise to a file in dir.
func randomFile(t *testing.T, dir string, size int, seed byte) (string, []byte) {
	t.Helper()
	data := make([]byte, size)
	rand.NewChaCha8([32]byte{seed}).Read(data)
	path := filepath.Join(dir, "artifact")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// TestBlobChunks: an artifact of two and a half chunks is stored as three
// chunks and comes back byte-identical; storing it again uploads
// nothing; an empty file is a blob of no chunk; a chunk whose bytes
// changed, or that is missing, makes the download an error naming the
// blob, with no file (not even a partial one) left; deleting a blob
// deletes its chunks.
func TestBlobChunks(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	dir := t.TempDir()
	count := func(h string) (n int) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM perfbot_fleet_blob_chunks WHERE sha256 = $1`, h).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	path, data := randomFile(t, dir, 2*blobChunk+blobChunk/2, 1)
	h, err := putBlobFile(ctx, pool, path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(data); h != hex.EncodeToString(sum[:]) {
		t.Fatalf("putBlobFile returned %s, not the file's hash", h)
	}
	if n := count(h); n != 3 {
		t.Errorf("%d chunks, want 3", n)
	}
	out := filepath.Join(dir, "out", "artifact")
	if err := getBlobFile(ctx, pool, h, out); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("downloaded %d bytes (%v), not the %d uploaded", len(got), err, len(data))
	}
	var stored1, stored2 string
	// A chunk rewritten has a new xmin (stored changes: a reuse marks
	// the blob stored now, see touchBlob).
	pool.QueryRow(ctx, `SELECT xmin::text FROM perfbot_fleet_blob_chunks WHERE sha256 = $1 AND idx = 0`, h).Scan(&stored1)
	if h2, err := putBlobFile(ctx, pool, path); err != nil || h2 != h {
		t.Fatalf("storing it again: %s, %v", h2, err)
	}
	pool.QueryRow(ctx, `SELECT xmin::text FROM perfbot_fleet_blob_chunks WHERE sha256 = $1 AND idx = 0`, h).Scan(&stored2)
	if stored1 == "" || stored1 != stored2 || count(h) != 3 {
		t.Errorf("storing a blob again wrote it again (stored %s, then %s; %d chunks)", stored1, stored2, count(h))
	}

	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	he, err := putBlobFile(ctx, pool, empty)
	if err != nil {
		t.Fatal(err)
	}
	if err := getBlobFile(ctx, pool, he, filepath.Join(dir, "out", "empty")); err != nil || count(he) != 0 {
		t.Errorf("an empty blob: %v, %d chunks", err, count(he))
	}
	if got, err := getBlob(ctx, pool, he); err != nil || len(got) != 0 {
		t.Errorf("getBlob of the empty blob: %q, %v", got, err)
	}

	// A damaged chunk, then a missing one.
	for _, damage := range []string{
		`UPDATE perfbot_fleet_blob_chunks SET data = set_byte(data, 7, (get_byte(data, 7) + 1) % 256) WHERE sha256 = $1 AND idx = 1`,
		`DELETE FROM perfbot_fleet_blob_chunks WHERE sha256 = $1 AND idx = 1`,
	} {
		if _, err := pool.Exec(ctx, damage, h); err != nil {
			t.Fatal(err)
		}
		bad := filepath.Join(dir, "bad", "artifact")
		err := getBlobFile(ctx, pool, h, bad)
		if err == nil || !strings.Contains(err.Error(), h) {
			t.Errorf("%.40s...: downloading gave %v, want an error naming blob %.12s", damage, err, h)
		}
		left, _ := filepath.Glob(filepath.Join(dir, "bad", "*"))
		if len(left) > 0 {
			t.Errorf("%.40s...: a failed download left %v", damage, left)
		}
		if _, err := getBlob(ctx, pool, h); err == nil {
			t.Errorf("%.40s...: getBlob read it without an error", damage)
		}
	}

	if err := deleteBlob(ctx, pool, h); err != nil {
		t.Fatal(err)
	}
	if n := count(h); n != 0 {
		t.Errorf("deleting the blob left %d of its chunks", n)
	}
}

// TestBlobUploadChecked: bytes that do not hash to the name they are
// uploaded under (a file that changed between its hashing and its upload)
// are an error, and nothing of them is stored; two machines uploading one
// blob at once store it once.
func TestBlobUploadChecked(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	data := make([]byte, 3*blobChunk)
	rand.NewChaCha8([32]byte{2}).Read(data)
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	changed := bytes.Clone(data)
	changed[len(changed)-1]++
	for _, r := range []*bytes.Reader{bytes.NewReader(changed), bytes.NewReader(data[:len(data)-5]), bytes.NewReader(append(bytes.Clone(data), 1))} {
		err := putChunks(ctx, pool, h, int64(len(data)), r)
		if err == nil || !strings.Contains(err.Error(), "while it was uploaded") {
			t.Errorf("uploading %d other bytes under the hash: %v, want an error", r.Size(), err)
		}
	}
	var n int
	pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM perfbot_fleet_blob_chunks) + (SELECT count(*) FROM perfbot_fleet_blobs)`).Scan(&n)
	if n != 0 {
		t.Errorf("failed uploads left %d rows", n)
	}
	if err := putChunks(ctx, pool, h, MaxBlob+1, bytes.NewReader(nil)); err == nil || !errors.Is(err, errTooLarge) {
		t.Errorf("a blob over MaxBlob: %v", err)
	}

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = putChunks(ctx, pool, h, int64(len(data)), bytes.NewReader(data)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("upload %d of 4 at once: %v", i, err)
		}
	}
	pool.QueryRow(ctx, `SELECT count(*) FROM perfbot_fleet_blob_chunks WHERE sha256 = $1`, h).Scan(&n)
	if got, err := getBlob(ctx, pool, h); err != nil || !bytes.Equal(got, data) || n != 3 {
		t.Errorf("after 4 uploads at once: %d chunks, read back %d bytes (%v)", n, len(got), err)
	}
}

// TestBlobBeforeChunks: a fleet database from before chunks (its blob
// table's bytes in one bytea column, NOT NULL) is migrated in place, and
// its blobs are still read, to a file, in memory and over HTTP, a chunk
// at a time from the row.
func TestBlobBeforeChunks(t *testing.T) {
	ctx := context.Background()
	pool, err := Connect(ctx, testutil.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	data := make([]byte, 2*blobChunk+17)
	rand.NewChaCha8([32]byte{3}).Read(data)
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	if _, err := pool.Exec(ctx, `CREATE TABLE perfbot_fleet_blobs (sha256 text PRIMARY KEY, size bigint NOT NULL, data bytea NOT NULL);
		`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO perfbot_fleet_blobs VALUES ($1, $2, $3)`, h, len(data), data); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second migration changes nothing
		if err := Migrate(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "artifact")
	if err := getBlobFile(ctx, pool, h, out); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, data) {
		t.Errorf("an old blob read to a file: %d bytes (%v), want the %d stored", len(got), err, len(data))
	}
	if got, err := getBlob(ctx, pool, h); err != nil || !bytes.Equal(got, data) {
		t.Errorf("an old blob read whole: %d bytes (%v)", len(got), err)
	}
	// A new blob beside it is chunked.
	h2, err := putBlob(ctx, pool, []byte("a log"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := getBlob(ctx, pool, h2); err != nil || string(got) != "a log" {
		t.Errorf("a new blob in a migrated database: %q, %v", got, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE perfbot_fleet_blobs SET data = set_byte(data, 3, (get_byte(data, 3) + 1) % 256) WHERE sha256 = $1`, h); err != nil {
		t.Fatal(err)
	}
	if err := getBlobFile(ctx, pool, h, out+"2"); err == nil || !strings.Contains(err.Error(), "does not match its hash") {
		t.Errorf("a damaged old blob: %v, want a hash mismatch", err)
	}
}
