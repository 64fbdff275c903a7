package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Blobs (artifacts and logs) are stored in chunks: a row of
// perfbot_fleet_blobs names the blob (its SHA-256, size and chunk size)
// and perfbot_fleet_blob_chunks holds its bytes, blobChunk at a time,
// keyed by the hash and the chunk's index. A blob is written in one
// transaction, its chunks first and its row last, so a blob half written
// (a worker killed in the middle of a 250 MB upload) is never seen, and
// read one chunk per query, so neither side ever holds more than a chunk
// or two of it. A blob of a fleet from before chunks keeps its bytes in
// the row's data column (chunk_size 0) and is read from there.
//
// Chunks rather than PostgreSQL's large objects: chunks are plain rows
// that go with their blob (a foreign key, ON DELETE CASCADE), need no
// lo_unlink or vacuumlo for a writer killed before it recorded the
// object, are read by short queries (a large object is read inside one
// transaction, which a slow HTTP client would hold open for minutes),
// and a Range request goes straight to its chunk.

// blobChunk is the size of each chunk but the last.
const blobChunk = 1 << 20

// MaxBlob is the largest artifact or log the fleet stores: one upload is
// one transaction, whose write-ahead log is the blob's size. A build with
// a larger artifact is an error naming it.
const MaxBlob = 4 << 30

// errTooLarge is a blob over MaxBlob.
var errTooLarge = errors.New("more than the fleet stores in one blob")

// blobSchema makes the blob tables chunked; it runs after schema (the
// blob table of a fleet from before chunks gains its columns there). The
// chunks are stored uncompressed (STORAGE EXTERNAL): binaries hardly
// compress, and an uncompressed value is read without decompressing it.
const blobSchema = `
DO $$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'perfbot_fleet_blobs' AND column_name = 'chunk_size') THEN
		ALTER TABLE perfbot_fleet_blobs ALTER COLUMN data DROP NOT NULL;
		-- 0: a blob from before chunks, its bytes in data.
		ALTER TABLE perfbot_fleet_blobs ADD COLUMN chunk_size int NOT NULL DEFAULT 0;
		ALTER TABLE perfbot_fleet_blobs ADD COLUMN stored timestamptz NOT NULL DEFAULT now();
	END IF;
END $$;
CREATE TABLE IF NOT EXISTS perfbot_fleet_blob_chunks (
	sha256 text NOT NULL REFERENCES perfbot_fleet_blobs ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
	idx int NOT NULL,
	data bytea NOT NULL,
	PRIMARY KEY (sha256, idx)
);
DO $$ BEGIN
	IF (SELECT attstorage FROM pg_attribute WHERE attrelid = 'perfbot_fleet_blob_chunks'::regclass AND attname = 'data') <> 'e' THEN
		ALTER TABLE perfbot_fleet_blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
	END IF;
END $$;
`

// putBlobFile stores the file at path under its SHA-256 and returns the
// hash, streaming it: it reads the file twice (its hash names the
// chunks), holding one chunk in memory, and uploads nothing when the
// fleet has the blob already. A file that changes between the two reads
// is an error, not a blob under another content's hash.
func putBlobFile(ctx context.Context, pool *pgxpool.Pool, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sum := sha256.New()
	size, err := io.Copy(sum, f)
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	h := hex.EncodeToString(sum.Sum(nil))
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	if err := putChunks(ctx, pool, h, size, f); err != nil {
		return "", fmt.Errorf("uploading %s: %w", path, err)
	}
	return h, nil
}

// putBlob stores data (a small blob: a log) under its SHA-256 and
// returns the hash.
func putBlob(ctx context.Context, pool *pgxpool.Pool, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	return h, putChunks(ctx, pool, h, int64(len(data)), bytes.NewReader(data))
}

// putChunks stores the size bytes of r as blob h, in one transaction,
// checking as it reads that they are size bytes with hash h. A blob the
// fleet has already is not read; two machines uploading one blob at once
// store it once (the second waits for the first's chunks, then skips
// them).
func putChunks(ctx context.Context, pool *pgxpool.Pool, h string, size int64, r io.Reader) error {
	if size > MaxBlob {
		return fmt.Errorf("%d MiB: %w (fleet.MaxBlob, %d MiB)", size>>20, errTooLarge, MaxBlob>>20)
	}
	if have, err := touchBlob(ctx, pool, h); err != nil || have {
		return err
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
	sum := sha256.New()
	buf := make([]byte, blobChunk)
	var n int64
	for idx := 0; n < size; idx++ { // an empty blob has no chunk
		k, err := io.ReadFull(r, buf[:min(int64(blobChunk), size-n)])
		if err != nil {
			return fmt.Errorf("at byte %d of %d: %w (it changed while it was uploaded)", n+int64(k), size, err)
		}
		sum.Write(buf[:k])
		n += int64(k)
		if _, err := tx.Exec(ctx, `INSERT INTO perfbot_fleet_blob_chunks (sha256, idx, data) VALUES ($1, $2, $3)
			ON CONFLICT (sha256, idx) DO NOTHING`, h, idx, buf[:k]); err != nil {
			return fmt.Errorf("chunk %d of blob %s: %w", idx, h, err)
		}
	}
	if k, _ := r.Read(buf[:1]); k > 0 {
		return fmt.Errorf("more than its %d bytes (it grew while it was uploaded)", size)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != h {
		return fmt.Errorf("its bytes hash to %s, not %s (it changed while it was uploaded)", got, h)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO perfbot_fleet_blobs (sha256, size, chunk_size) VALUES ($1, $2, $3)
		ON CONFLICT (sha256) DO NOTHING`, h, size, blobChunk); err != nil {
		return fmt.Errorf("blob %s: %w", h, err)
	}
	return tx.Commit(ctx)
}

// hasBlob reports whether the fleet stores blob h.
func hasBlob(ctx context.Context, pool *pgxpool.Pool, h string) (bool, error) {
	var one int
	err := pool.QueryRow(ctx, `SELECT 1 FROM perfbot_fleet_blobs WHERE sha256 = $1`, h).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// touchBlob reports whether the fleet stores blob h, and marks it stored
// now: a blob about to be referenced again (a build record or run that
// names it) is not collected under its writer (CollectBlobs spares the
// blobs stored within its grace; the update and a collection's delete of
// the row exclude each other).
func touchBlob(ctx context.Context, pool *pgxpool.Pool, h string) (bool, error) {
	tag, err := pool.Exec(ctx, `UPDATE perfbot_fleet_blobs SET stored = now() WHERE sha256 = $1`, h)
	return err == nil && tag.RowsAffected() == 1, err
}

// deleteBlob removes blob h and its chunks.
func deleteBlob(ctx context.Context, pool *pgxpool.Pool, h string) error {
	_, err := pool.Exec(ctx, `DELETE FROM perfbot_fleet_blobs WHERE sha256 = $1`, h)
	return err
}
