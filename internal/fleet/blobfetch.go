package fleet

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"
)

// maxBlobInMemory is the largest blob getBlob reads into memory (logs);
// an artifact goes to a file (getBlobFile).
const maxBlobInMemory = 64 << 20

// getBlobFile writes blob h to path, streaming it a chunk at a time and
// checking it against its hash as it goes: the file appears, synced and
// executable, only once every byte matched; a blob that does not match
// (or a download cut short) is an error naming the blob, and no file,
// not even a partial one, is left.
func getBlobFile(ctx context.Context, pool *pgxpool.Pool, h, path string) (err error) {
	b, err := openBlob(ctx, pool, h)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// A temporary file of its own: two downloads to one path never write
	// into one file.
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if err := f.Chmod(0o755); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	n, err := io.Copy(f, onlyReader{b})
	if err != nil {
		return fmt.Errorf("downloading blob %s to %s: %w", h, path, err)
	}
	if n != b.size || b.summed != b.size {
		return fmt.Errorf("downloading blob %s to %s: %d of its %d bytes checked", h, path, b.summed, b.size)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// onlyReader hides a reader's other methods (the blob's Seek), so that
// io.Copy reads it front to back through the file's ReadFrom.
type onlyReader struct{ io.Reader }

// getBlob reads the small blob h (a log) whole and checks it against its
// hash. A blob larger than maxBlobInMemory is an error: an artifact is
// read to a file (getBlobFile) or streamed (openBlob).
func getBlob(ctx context.Context, pool *pgxpool.Pool, h string) ([]byte, error) {
	b, err := openBlob(ctx, pool, h)
	if err != nil {
		return nil, err
	}
	if b.size > maxBlobInMemory {
		return nil, fmt.Errorf("blob %s is %d MiB: more than is read into memory (%d MiB); read it to a file", h, b.size>>20, maxBlobInMemory>>20)
	}
	data := make([]byte, 0, b.size)
	for b.off < b.size {
		if err := b.fill(); err != nil {
			return nil, err
		}
		data = append(data, b.buf...)
		b.off += int64(len(b.buf))
	}
	return data, nil
}
