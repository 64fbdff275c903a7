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

// blobChunk is how much of a blob one query reads: serving a blob holds
// at most this much of it in memory, whatever its size.
const blobChunk = 1 << 20

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
	off  int64

	buf    []byte // the chunk at bufOff
	bufOff int64
	sum    hash.Hash
	summed int64 // bytes hashed, from the start
}

// openBlob finds the blob h and its size (not its bytes).
func openBlob(ctx context.Context, pool *pgxpool.Pool, h string) (*blobReader, error) {
	b := &blobReader{ctx: ctx, pool: pool, sha: h, sum: sha256.New()}
	if err := pool.QueryRow(ctx, `SELECT octet_length(data) FROM perfbot_fleet_blobs WHERE sha256 = $1`, h).Scan(&b.size); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("blob %s is not in the fleet's database: %w", h, err)
		}
		return nil, fmt.Errorf("blob %s: %w", h, err)
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

// fill reads the chunk at the offset.
func (b *blobReader) fill() error {
	n := min(int64(blobChunk), b.size-b.off)
	var chunk []byte
	if err := b.pool.QueryRow(b.ctx, `SELECT substring(data FROM $2 FOR $3) FROM perfbot_fleet_blobs WHERE sha256 = $1`,
		b.sha, b.off+1, n).Scan(&chunk); err != nil {
		return fmt.Errorf("blob %s at %d: %w", b.sha, b.off, err)
	}
	if int64(len(chunk)) != n {
		return fmt.Errorf("blob %s at %d: read %d bytes, want %d", b.sha, b.off, len(chunk), n)
	}
	if b.summed == b.off {
		b.sum.Write(chunk)
		b.summed += n
		if b.summed == b.size && hex.EncodeToString(b.sum.Sum(nil)) != b.sha {
			return fmt.Errorf("blob %s does not match its hash", b.sha)
		}
	}
	b.buf, b.bufOff = chunk, b.off
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
