package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/perfbot/perfbot/internal/httpsafe"
)

// blobRate is the slowest a client may read a blob: its write deadline is
// the server's usual one plus its size at this rate.
const blobRate = 1 << 20 // bytes per second

// serveBlob answers GET /api/blobs/{sha}: the blob streamed from the
// database in chunks (http.ServeContent: Range, If-None-Match on the hash
// as its ETag), its hash checked on the way when it is read whole.
func (s *Server) serveBlob(w http.ResponseWriter, r *http.Request) {
	b, err := openBlob(r.Context(), s.cfg.Pool, r.PathValue("sha"))
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, pgx.ErrNoRows) {
			code = http.StatusNotFound
		}
		httpError(w, code, err)
		return
	}
	httpsafe.ExtendWrite(w, httpsafe.DefaultWrite+time.Duration(b.size/blobRate)*time.Second)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("ETag", `"`+b.sha+`"`)
	w.Header().Set("Cache-Control", "private, max-age=31536000, immutable")
	http.ServeContent(w, r, "", time.Time{}, b)
}

// blobReader reads a blob from the database a chunk at a time
// (io.ReadSeeker). Read whole from its start, it checks the blob against
// its hash before it hands out the last chunk: a blob that does not match
// ends in an error, never as a complete answer.
type blobReader struct {
	ctx  context.Context
	pool *pgxpool.Pool
	sha  string
	size int64
	// chunk is the size of the blob's chunks; 0 for a blob from before
	// chunks, read blobChunk at a time from its row.
	chunk int64
	off   int64

	buf    []byte // the chunk at bufOff
	bufOff int64
	sum    hash.Hash
	summed int64 // bytes hashed, from the start
}

// openBlob finds the blob h and its size (not its bytes).
func openBlob(ctx context.Context, pool *pgxpool.Pool, h string) (*blobReader, error) {
	b := &blobReader{ctx: ctx, pool: pool, sha: h, sum: sha256.New()}
	if err := pool.QueryRow(ctx, `SELECT size, chunk_size FROM perfbot_fleet_blobs WHERE sha256 = $1`, h).Scan(&b.size, &b.chunk); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("blob %s is not in the fleet's database: %w", h, err)
		}
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	if b.size == 0 && hex.EncodeToString(b.sum.Sum(nil)) != h {
		return nil, fmt.Errorf("blob %s does not match its hash (it is empty)", h)
	}
	return b, nil
}

func (b *blobReader) Read(p []byte) (int, error) {
	if b.off >= b.size {
		return 0, io.EOF
	}
	if b.off < b.bufOff || b.off >= b.bufOff+int64(len(b.buf)) {
		if err := b.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, b.buf[b.off-b.bufOff:])
	b.off += int64(n)
	return n, nil
}

// fill reads the chunk that holds the offset (of an old blob: the
// blobChunk bytes from the offset).
func (b *blobReader) fill() error {
	start, n := b.off, min(blobChunk, b.size-b.off)
	query, args := `SELECT substring(data FROM $2 FOR $3) FROM perfbot_fleet_blobs WHERE sha256 = $1`, []any{b.sha, start + 1, n}
	if b.chunk > 0 {
		idx := b.off / b.chunk
		start = idx * b.chunk
		n = min(b.chunk, b.size-start)
		query, args = `SELECT data FROM perfbot_fleet_blob_chunks WHERE sha256 = $1 AND idx = $2`, []any{b.sha, idx}
	}
	rows, err := b.pool.Query(b.ctx, query, args...)
	if err != nil {
		return fmt.Errorf("blob %s at %d: %w", b.sha, start, err)
	}
	b.buf = b.buf[:0]
	found := rows.Next()
	if found {
		// Copied into the reader's buffer: no allocation per chunk.
		b.buf = append(b.buf, rows.RawValues()[0]...)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("blob %s at %d: %w", b.sha, start, err)
	}
	if !found || int64(len(b.buf)) != n {
		return fmt.Errorf("blob %s at %d: read %d bytes, want %d (a chunk is missing or damaged)", b.sha, start, len(b.buf), n)
	}
	b.bufOff = start
	if b.summed == start {
		b.sum.Write(b.buf)
		b.summed += n
		if b.summed == b.size && hex.EncodeToString(b.sum.Sum(nil)) != b.sha {
			b.buf = b.buf[:0]
			return fmt.Errorf("blob %s does not match its hash", b.sha)
		}
	}
	return nil
}

func (b *blobReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += b.off
	case io.SeekEnd:
		offset += b.size
	default:
		return 0, fmt.Errorf("blob %s: seek whence %d", b.sha, whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("blob %s: seek to %d", b.sha, offset)
	}
	b.off = offset
	return offset, nil
}
